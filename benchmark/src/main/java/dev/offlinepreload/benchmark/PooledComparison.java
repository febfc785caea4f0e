package dev.offlinepreload.benchmark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The "no worse than stock" for one 10-s window, decided with the noise of the restarts in view. At a low
 * rate a window's p99 is its second-slowest request of a hundred and one setup's restarts spread two-fold there, so
 * a median of three p99s cannot tell a 10% difference from chance. Here each setup's requests of the window are pooled
 * over its restarts (three restarts at 10/s: the 3rd-slowest of 300), and a bootstrap that resamples first the
 * restarts, then the requests within each (a restart is the unit that varies most), gives a 90% interval for the
 * provider's p99 minus stock's. The window is then <em>no worse</em> when the whole interval is within the criterion's
 * tolerance (10% of stock's pooled p99, or 50 ms if that is more), <em>worse</em> when all of it is above, and
 * <em>not decided</em> when the restarts measured cannot say.
 */
final class PooledComparison {

    enum Verdict {
        NO_WORSE("no worse"), WORSE("worse"), NOT_DECIDED("not decided");

        private final String text;

        Verdict(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** Pooled p99s (ms), the 90% interval of their difference (provider minus stock, ms) and what it says. */
    record Result(double stockP99, double providerP99, double low, double high, Verdict verdict) {
    }

    private static final int RESAMPLES = 2000;
    /** Fixed, so that the same samples always give the same interval. */
    private static final long SEED = 42;

    private PooledComparison() {
    }

    /**
     * @param stock    per restart of stock, the latencies (ms) of the window's successful requests
     * @param provider the same for the provider's setup
     */
    static Result compare(List<List<Double>> stock, List<List<Double>> provider) {
        double stockP99 = pooledP99(stock);
        double providerP99 = pooledP99(provider);
        if (Double.isNaN(stockP99) || Double.isNaN(providerP99)) {
            return new Result(stockP99, providerP99, Double.NaN, Double.NaN, Verdict.NOT_DECIDED);
        }
        SplittableRandom random = new SplittableRandom(SEED);
        double[] differences = new double[RESAMPLES];
        for (int i = 0; i < RESAMPLES; i++) {
            differences[i] = p99(resample(provider, random)) - p99(resample(stock, random));
        }
        Arrays.sort(differences);
        double low = differences[(int) (0.05 * RESAMPLES)];
        double high = differences[(int) (0.95 * RESAMPLES) - 1];
        double tolerance = Math.max(0.1 * stockP99, 50);
        Verdict verdict = high <= tolerance ? Verdict.NO_WORSE : low > tolerance ? Verdict.WORSE : Verdict.NOT_DECIDED;
        return new Result(stockP99, providerP99, low, high, verdict);
    }

    /** The runs drawn with replacement, then each drawn run's requests drawn with replacement, pooled. */
    private static List<Double> resample(List<List<Double>> runs, SplittableRandom random) {
        List<Double> pooled = new ArrayList<>();
        for (int r = 0; r < runs.size(); r++) {
            List<Double> run = runs.get(random.nextInt(runs.size()));
            for (int i = 0; i < run.size(); i++) {
                pooled.add(run.get(random.nextInt(run.size())));
            }
        }
        return pooled;
    }

    /** The p99 of every run's latencies together. */
    static double pooledP99(List<List<Double>> runs) {
        return p99(runs.stream().flatMap(List::stream).toList());
    }

    private static double p99(List<Double> millis) {
        return new Latencies(millis, 0, 0).percentile(99);
    }
}
