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
 * <p>
 * Three restarts resampled three at a time understate how far restarts differ: on one saturated cell the interval was
 * confidently above the tolerance in one run and confidently below it in the next (runs aw and az, 2026-11-29). So a
 * verdict also needs the restarts themselves to agree: an exact rank test over the restarts' own p99s, one-sided at
 * 5% ({@link #rankP}), must put the candidate's above the reference's plus the tolerance (worse), or below them (no
 * worse). That takes at least three restarts a setup: with one or two no split of the restarts is rare enough, and
 * the window is not decided.
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
     * difference (candidate minus reference, ms), the rank test's p for the side the interval is on (NaN when it
     * straddles the tolerance) and what they say.
     */
    record Result(double referenceP99, double candidateP99, double low, double high, double restartsP, Verdict verdict) {
    }

    private static final int RESAMPLES = 2000;
    /** The rank test's level, one-sided: three restarts a setup reach it only when every pair of restarts agrees. */
    private static final double ALPHA = 0.05;
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
            return new Result(referenceP99, candidateP99, Double.NaN, Double.NaN, Double.NaN, Verdict.NOT_DECIDED);
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
        double[] referenceRestarts = restartP99s(reference, tolerance);
        double[] candidateRestarts = restartP99s(candidate, 0);
        double restartsP = high <= tolerance ? rankP(referenceRestarts, candidateRestarts)
                : low > tolerance ? rankP(candidateRestarts, referenceRestarts) : Double.NaN;
        Verdict verdict = !(restartsP <= ALPHA) ? Verdict.NOT_DECIDED : high <= tolerance ? Verdict.NO_WORSE : Verdict.WORSE;
        return new Result(referenceP99, candidateP99, low, high, restartsP, verdict);
    }

    /** Each restart's own p99 of the window, plus {@code shift} ms; restarts without a request in it left out. */
    private static double[] restartP99s(List<List<Double>> runs, double shift) {
        return runs.stream().filter(run -> !run.isEmpty()).mapToDouble(run -> p99(run) + shift).toArray();
    }

    /**
     * Exact one-sided rank test (Mann-Whitney): of all ways to split the values of both sides into groups of their
     * sizes, the share in which the first group ranks at least as far above the second as {@code higher} does above
     * {@code lower} (pairs where it is above, ties counted half). Three against three, all above: 1 in 20.
     */
    static double rankP(double[] higher, double[] lower) {
        double[] all = new double[higher.length + lower.length];
        System.arraycopy(higher, 0, all, 0, higher.length);
        System.arraycopy(lower, 0, all, higher.length, lower.length);
        int[] count = new int[2];
        splits(all, higher.length, 0, new boolean[all.length], 0, pairsAbove(higher, lower), count);
        return (double) count[0] / count[1];
    }

    /** Every choice of {@code size} values as the first group: count[1] of them, count[0] ranking at least as high. */
    private static void splits(double[] all, int size, int from, boolean[] chosen, int taken, double observed, int[] count) {
        if (taken == size) {
            double[] first = new double[size];
            double[] second = new double[all.length - size];
            for (int i = 0, f = 0, s = 0; i < all.length; i++) {
                if (chosen[i]) {
                    first[f++] = all[i];
                } else {
                    second[s++] = all[i];
                }
            }
            count[0] += pairsAbove(first, second) >= observed ? 1 : 0;
            count[1]++;
            return;
        }
        for (int i = from; i <= all.length - (size - taken); i++) {
            chosen[i] = true;
            splits(all, size, i + 1, chosen, taken + 1, observed, count);
            chosen[i] = false;
        }
    }

    /** Pairs (one value of each side) in which {@code higher}'s is above, ties counted half. */
    private static double pairsAbove(double[] higher, double[] lower) {
        double u = 0;
        for (double h : higher) {
            for (double l : lower) {
                u += h > l ? 1 : h == l ? 0.5 : 0;
            }
        }
        return u;
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
