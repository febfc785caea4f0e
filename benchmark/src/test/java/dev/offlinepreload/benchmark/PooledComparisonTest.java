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
    void oneRestartASideDecidesNothingWhateverItsRequestsSay() {
        // the bootstrap alone calls a twice-as-long tail worse (above); one restart against one cannot tell a setup
        // from the luck of that restart
        Result result = PooledComparison.compare(runs(1, 1, 1000, 50, 400), runs(2, 1, 1000, 50, 800));
        assertThat(result.low()).as("%s", result).isGreaterThan(0.1 * result.referenceP99());
        assertThat(result.restartsP()).isEqualTo(0.5);
        assertThat(result.verdict()).as("%s", result).isEqualTo(Verdict.NOT_DECIDED);
    }

    @Test
    void restartsThatDisagreeDecideNothingWhereThePooledIntervalWouldSayWorse() {
        // run aw's shape: the candidate's restarts above the reference's, but its best below the reference's worst
        List<List<Double>> reference = runs(1, 3, 1000, 50, 400);
        reference.set(2, run(new SplittableRandom(3), 1000, 50, 600));
        List<List<Double>> candidate = runs(2, 3, 1000, 50, 800);
        candidate.set(2, run(new SplittableRandom(4), 1000, 50, 580));
        Result result = PooledComparison.compare(reference, candidate);
        assertThat(result.low()).as("%s", result).isGreaterThan(Math.max(50, 0.1 * result.referenceP99()));
        assertThat(result.restartsP()).as("%s", result).isGreaterThan(0.05);
        assertThat(result.verdict()).as("%s", result).isEqualTo(Verdict.NOT_DECIDED);
    }

    @Test
    void theRankTestIsExact() {
        assertThat(PooledComparison.rankP(new double[] {3, 4, 5}, new double[] {0, 1, 2})).isEqualTo(0.05);
        assertThat(PooledComparison.rankP(new double[] {3, 1, 5}, new double[] {0, 4, 2})).isEqualTo(0.35);
        assertThat(PooledComparison.rankP(new double[] {1}, new double[] {0})).isEqualTo(0.5);
        assertThat(PooledComparison.rankP(new double[] {0, 1, 2}, new double[] {3, 4, 5})).isEqualTo(1.0);
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
