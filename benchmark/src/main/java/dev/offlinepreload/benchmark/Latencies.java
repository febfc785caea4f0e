package dev.offlinepreload.benchmark;

import java.util.List;
import java.util.Locale;

/** Percentiles of request latencies (nearest-rank), in milliseconds. */
final class Latencies {

    private final double[] sortedMillis;
    private final int failures;
    private final double wallSeconds;

    Latencies(List<Double> millis, int failures, double wallSeconds) {
        this.sortedMillis = millis.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        this.failures = failures;
        this.wallSeconds = wallSeconds;
    }

    double percentile(double p) {
        if (sortedMillis.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p / 100.0 * sortedMillis.length);
        return sortedMillis[Math.max(0, Math.min(sortedMillis.length - 1, rank - 1))];
    }

    int count() {
        return sortedMillis.length;
    }

    int failures() {
        return failures;
    }

    double perSecond() {
        return wallSeconds > 0 ? sortedMillis.length / wallSeconds : 0;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%d requests, p50 %.1f ms, p99 %.1f ms, %.0f/s, %d failed",
                count(), percentile(50), percentile(99), perSecond(), failures);
    }
}
