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
 * candidate's p99 minus the reference's. The window is then <em>no worse</em> when the whole interval is within the
 * criterion's tolerance (10% of the reference's pooled p99, or 50 ms if that is more), <em>worse</em> when all of it is
 * above, and <em>not decided</em> when the restarts measured cannot say. The reference is stock, or preloading=false on
 * the provider's own cluster (what preloading itself costs).
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

    /**
     * Pooled p99s (ms) of the reference (stock, or preloading=false) and the candidate, the 90% interval of their
     * difference (candidate minus reference, ms) and what it says.
     */
    record Result(double referenceP99, double candidateP99, double low, double high, Verdict verdict) {
    }

    private static final int RESAMPLES = 2000;
    /** Fixed, so that the same samples always give the same interval. */
    private static final long SEED = 42;

    private PooledComparison() {
    }

    /**
     * @param reference per restart of the reference setup, the latencies (ms) of the window's successful requests
     * @param candidate the same for the setup compared with it
     */
    static Result compare(List<List<Double>> reference, List<List<Double>> candidate) {
        double referenceP99 = pooledP99(reference);
        double candidateP99 = pooledP99(candidate);
        if (Double.isNaN(referenceP99) || Double.isNaN(candidateP99)) {
            return new Result(referenceP99, candidateP99, Double.NaN, Double.NaN, Verdict.NOT_DECIDED);
        }
        SplittableRandom random = new SplittableRandom(SEED);
        double[] differences = new double[RESAMPLES];
        for (int i = 0; i < RESAMPLES; i++) {
            differences[i] = p99(resample(candidate, random)) - p99(resample(reference, random));
        }
        Arrays.sort(differences);
        double low = differences[(int) (0.05 * RESAMPLES)];
        double high = differences[(int) (0.95 * RESAMPLES) - 1];
        double tolerance = Math.max(0.1 * referenceP99, 50);
        Verdict verdict = high <= tolerance ? Verdict.NO_WORSE : low > tolerance ? Verdict.WORSE : Verdict.NOT_DECIDED;
        return new Result(referenceP99, candidateP99, low, high, verdict);
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
