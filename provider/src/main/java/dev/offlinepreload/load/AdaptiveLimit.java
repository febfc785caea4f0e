package dev.offlinepreload.load;

import java.util.Locale;

/**
 * How much of the node the loader takes, in workers: an AIMD limit driven by what live requests see. It never counts
 * its own contention against itself when nothing else runs: with no request at work it doubles up to every worker
 * (a load on an idle node runs at full speed); with requests at work and threads waiting for a CPU it halves, down to
 * a floor of one worker for {@value #FLOOR} of the time, so every load finishes; with requests at work and CPUs free
 * it climbs back slowly. Below 1 the limit is one worker's share of the time. Pure logic, fed by {@link LoadGovernor}.
 */
public final class AdaptiveLimit {

    /** The least share the loader keeps: one worker, this share of the time. */
    public static final double FLOOR = 0.05;
    /** Fewer request threads at work than this, on average over a tick, count as none. */
    static final double IDLE_REQUESTS = 0.05;
    /** Mean scheduling delay (ms, over a tick) above which requests are taken to wait for a CPU. */
    static final double LATE_MILLIS = 2.0;

    private final double max;
    private final boolean adaptive;
    private double limit;
    private String reason;

    /**
     * @param workers  the most workers (workers-per-node)
     * @param adaptive false: always every worker (adaptive-load=false)
     */
    public AdaptiveLimit(int workers, boolean adaptive) {
        this.max = workers;
        this.adaptive = adaptive;
        this.limit = adaptive ? Math.min(1, max) : max;
        this.reason = adaptive ? "starting" : "adaptive-load=false";
    }

    /**
     * One tick's signals.
     *
     * @param busyRequests mean number of Keycloak request threads at work during the tick
     * @param lateMillis   mean scheduling delay during the tick: how late a short sleep woke up
     */
    public synchronized double update(double busyRequests, double lateMillis) {
        if (!adaptive) {
            return limit;
        }
        if (busyRequests < IDLE_REQUESTS) {
            limit = Math.min(max, limit < 1 ? 1 : limit * 2);
            reason = "no request at work";
        } else if (lateMillis > LATE_MILLIS) {
            limit = Math.max(FLOOR, limit / 2);
            reason = String.format(Locale.ROOT, "%.1f requests at work, threads %.1f ms late for a CPU", busyRequests, lateMillis);
        } else {
            limit = Math.min(max, limit + (limit < 1 ? FLOOR : 0.25));
            reason = String.format(Locale.ROOT, "%.1f requests at work, CPUs free", busyRequests);
        }
        return limit;
    }

    public synchronized double limit() {
        return limit;
    }

    /** The limit and what it last reacted to, for the progress line. */
    public synchronized String describe() {
        return String.format(Locale.ROOT, "load limit %.2f of %d workers (%s)", limit, (int) max, reason);
    }
}
