package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import dev.offlinepreload.benchmark.PooledComparison.Result;
import dev.offlinepreload.benchmark.PooledComparison.Verdict;
import org.junit.jupiter.api.Test;

class PooledComparisonTest {

    /** One restart's window: {@code requests} latencies around {@code typical} ms, a few up to {@code tail} ms. */
    private static List<Double> run(SplittableRandom random, int requests, double typical, double tail) {
        List<Double> millis = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            millis.add(i % 50 == 0 ? tail * (0.8 + 0.4 * random.nextDouble()) : typical * (0.5 + random.nextDouble()));
        }
        return millis;
    }

    private static List<List<Double>> runs(long seed, int restarts, int requests, double typical, double tail) {
        SplittableRandom random = new SplittableRandom(seed);
        List<List<Double>> runs = new ArrayList<>();
        for (int r = 0; r < restarts; r++) {
            runs.add(run(random, requests, typical, tail));
        }
        return runs;
    }

    @Test
    void theSameTailOnBothSidesAt40PerSecondIsNoWorse() {
        Result result = PooledComparison.compare(runs(1, 3, 400, 50, 150), runs(2, 3, 400, 50, 150));
        assertThat(result.verdict()).as("%s", result).isEqualTo(Verdict.NO_WORSE);
        assertThat(result.low()).as("%s", result).isLessThanOrEqualTo(0);
    }

    @Test
    void theSameTailOnBothSidesAt10PerSecondWithThreeRestartsDecidesNothing() {
        // 300 requests a side: the p99 is the 3rd-slowest, and chance moves it by more than the 50-ms tolerance
        Result result = PooledComparison.compare(runs(1, 3, 100, 50, 150), runs(2, 3, 100, 50, 150));
        assertThat(result.verdict()).as("%s", result).isEqualTo(Verdict.NOT_DECIDED);
    }

    @Test
    void aTailTwiceAsLongInEveryRestartIsWorse() {
        Result result = PooledComparison.compare(runs(1, 3, 1000, 50, 400), runs(2, 3, 1000, 50, 800));
        assertThat(result.verdict()).as("%s", result).isEqualTo(Verdict.WORSE);
        assertThat(result.candidateP99()).isGreaterThan(result.referenceP99());
    }

    @Test
    void oneSlowRestartOfThreeAtALowRateDecidesNothing() {
        List<List<Double>> stock = runs(1, 3, 100, 50, 150);
        List<List<Double>> provider = runs(2, 3, 100, 50, 150);
        provider.set(0, run(new SplittableRandom(3), 100, 50, 450));
        Result result = PooledComparison.compare(stock, provider);
        assertThat(result.verdict()).as("%s", result).isEqualTo(Verdict.NOT_DECIDED);
        assertThat(result.low()).isLessThan(Math.max(50, 0.1 * result.referenceP99())).as("%s", result);
        assertThat(result.high()).isGreaterThan(50).as("%s", result);
    }

    @Test
    void aWindowWithoutRequestsIsNotDecided() {
        Result result = PooledComparison.compare(List.of(List.of(), List.of()), runs(2, 2, 100, 50, 150));
        assertThat(result.verdict()).isEqualTo(Verdict.NOT_DECIDED);
        assertThat(result.referenceP99()).isNaN();
    }

    @Test
    void theIntervalIsTheSameForTheSameSamples() {
        assertThat(PooledComparison.compare(runs(1, 3, 100, 50, 150), runs(2, 3, 100, 50, 300)))
                .isEqualTo(PooledComparison.compare(runs(1, 3, 100, 50, 150), runs(2, 3, 100, 50, 300)));
    }
}
