package dev.offlinepreload.load;

import java.util.Locale;

/**
 * The load's share of one worker while a node keeps up with steady traffic, set by what it costs the requests. A fixed
 * share held the requests' p99 at the latency that counts as slow, 3-5 times stock's (run cf, docs/performance.md): what
 * the load may take depends on the node's cores and on the traffic, so the share is measured against the node's own
 * requests with the load paused. Every {@value #CYCLE_TICKS} ticks, {@value #BASELINE_TICKS} without the load (the
 * baseline), then the rest at the share; at the end of each cycle the requests' mean time with the load is compared with
 * the baseline's of the last {@value #BASELINE_CYCLES} cycles: more than {@value #MARGIN_MILLIS} ms and
 * {@value #MARGIN_RATIO} above it halves the share, otherwise it grows by a quarter, up to the configured share.
 * The first {@value #SETTLE_TICKS} ticks of each phase are not counted: a batch begun before a pause is still running
 * then. Steady traffic means no request slower than {@link RequestWatch#SLOW_MILLIS}, so each mean is of short
 * requests, and a few of them decide nothing: a cycle with fewer than {@value #MIN_REQUESTS} on either side leaves the
 * share as it is. Pure logic, fed by {@link AdaptiveLimit} once per tick of steady traffic.
 */
final class SteadyShare {

    static final int BASELINE_TICKS = 20;
    static final int CYCLE_TICKS = 100;
    static final int SETTLE_TICKS = 5;
    static final int BASELINE_CYCLES = 3;
    static final int MIN_REQUESTS = 10;
    static final double MARGIN_MILLIS = 5;
    static final double MARGIN_RATIO = 0.10;
    /** The share starts at this fraction of the configured one, and never goes below a sixteenth of it. */
    static final double START = 0.25;
    static final double MIN = 1.0 / 16;

    private final double max;
    private double share;
    /** The tick of the cycle that the limit last returned applies to. */
    private int position;
    private final int[] baselineCount = new int[BASELINE_CYCLES];
    private final double[] baselineMillis = new double[BASELINE_CYCLES];
    private int cycle;
    private int loadCount;
    private double loadMillis;
    private String verdict = "not yet measured";

    /** @param max the configured share of one worker's time, above 0 */
    SteadyShare(double max) {
        this.max = max;
        this.share = max * START;
    }

    /**
     * One tick of steady traffic.
     *
     * @param finished the requests that finished during the tick
     * @return the limit for the next tick: 0 in the baseline's ticks, else the share
     */
    double next(RequestWatch.Finished finished) {
        boolean baseline = position < BASELINE_TICKS;
        int inPhase = baseline ? position : position - BASELINE_TICKS;
        if (inPhase >= SETTLE_TICKS) {
            if (baseline) {
                baselineCount[cycle] += finished.count();
                baselineMillis[cycle] += finished.millis();
            } else {
                loadCount += finished.count();
                loadMillis += finished.millis();
            }
        }
        if (++position == CYCLE_TICKS) {
            decide();
            position = 0;
            cycle = (cycle + 1) % BASELINE_CYCLES;
            baselineCount[cycle] = 0;
            baselineMillis[cycle] = 0;
        }
        return position < BASELINE_TICKS ? 0 : share;
    }

    private void decide() {
        int count = 0;
        double millis = 0;
        for (int i = 0; i < BASELINE_CYCLES; i++) {
            count += baselineCount[i];
            millis += baselineMillis[i];
        }
        if (count >= MIN_REQUESTS && loadCount >= MIN_REQUESTS) {
            double without = millis / count;
            double with = loadMillis / loadCount;
            boolean costs = with > without + Math.max(MARGIN_MILLIS, MARGIN_RATIO * without);
            share = costs ? Math.max(max * MIN, share / 2) : Math.min(max, share * 1.25);
            verdict = String.format(Locale.ROOT, "requests %.0f ms with the load, %.0f ms without", with, without);
        }
        loadCount = 0;
        loadMillis = 0;
    }

    /**
     * The steady traffic ended: behind (a slow request, or more at work), which halves the share if the load was
     * running, or quiet, which does not. The next spell begins with a baseline; the baselines measured so far stay.
     */
    void interrupted(boolean behind) {
        if (behind && position >= BASELINE_TICKS) {
            share = Math.max(max * MIN, share / 2);
        }
        position = 0;
        loadCount = 0;
        loadMillis = 0;
    }

    double share() {
        return share;
    }

    String describe() {
        return String.format(Locale.ROOT, "share %.3f of up to %.2f (%s)%s", share, max, verdict,
                position < BASELINE_TICKS ? ", paused to measure the requests without the load" : "");
    }
}
