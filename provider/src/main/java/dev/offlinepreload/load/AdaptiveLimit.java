package dev.offlinepreload.load;

import java.util.Locale;

/**
 * How much of the node the loader takes, in workers: a limit driven by what live requests see, so that the load only
 * takes CPU nobody is waiting for. Every {@value #TICK_MILLIS} ms:
 * <ul>
 * <li>no request at work: once the node has been quiet for {@value #QUIET_TICKS} ticks in a row, the limit doubles,
 * up to every worker (a load on an idle node runs at full speed: its own contention is nobody's loss). A gap between
 * two requests is no quiet node: under steady traffic, full speed in the gaps is what the next requests would meet.</li>
 * <li>requests at work and threads waiting for a CPU: 0 at once, because on a saturated node every core-second the
 * load takes is one a request waits for. Only after {@link #PATIENCE_TICKS} such ticks without a break does it keep a
 * floor, one worker {@value #FLOOR} of the time, so that a load on a node that is never idle still finishes.</li>
 * <li>requests at work and CPUs free: it climbs by {@value #CLIMB} of a worker per tick, to at most
 * {@value #BUSY_SHARE} of one worker: the background share a node serving requests gives the load.</li>
 * </ul>
 * Below 1 the limit is one worker's share of the time. Pure logic, fed by {@link LoadGovernor}.
 */
public final class AdaptiveLimit {

    /** How often the limit is updated. */
    static final int TICK_MILLIS = 100;
    /** The least share the loader keeps once the node has been saturated for the patience: one worker, this share of the time. */
    public static final double FLOOR = 0.02;
    /** Ticks of saturation without a break before the floor applies: a minute. */
    static final int PATIENCE_TICKS = 60_000 / TICK_MILLIS;
    /** Ticks with no request at work, in a row, before the load speeds up: a second. */
    static final int QUIET_TICKS = 1_000 / TICK_MILLIS;
    /** The most the load takes while requests are at work: one worker, this share of the time. */
    static final double BUSY_SHARE = 0.5;
    /** Fewer request threads at work than this, on average over a tick, count as none. */
    static final double IDLE_REQUESTS = 0.05;
    /** Mean scheduling delay (ms, over a tick) above which requests are taken to wait for a CPU. */
    static final double LATE_MILLIS = 2.0;
    /** The climb per tick with requests at work and CPUs free, in shares of one worker. */
    static final double CLIMB = 0.05;

    private final double max;
    private final boolean adaptive;
    private double limit;
    private int saturatedTicks;
    private int quietTicks;
    private String reason;

    /**
     * @param workers  the most workers (workers-per-node)
     * @param adaptive false: always every worker (adaptive-load=false)
     */
    public AdaptiveLimit(int workers, boolean adaptive) {
        this.max = workers;
        this.adaptive = adaptive;
        // Adaptive, nothing runs until the node has been looked at.
        this.limit = adaptive ? 0 : max;
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
            saturatedTicks = 0;
            if (++quietTicks >= QUIET_TICKS) {
                limit = Math.min(max, limit < 1 ? 1 : limit * 2);
                reason = "no request at work";
            } else {
                reason = "no request at work for " + quietTicks * TICK_MILLIS + " ms";
            }
        } else if (lateMillis > LATE_MILLIS) {
            quietTicks = 0;
            saturatedTicks++;
            limit = saturatedTicks >= PATIENCE_TICKS ? Math.min(FLOOR, max) : 0;
            reason = String.format(Locale.ROOT, "%.1f requests at work, threads %.1f ms late for a CPU%s", busyRequests,
                    lateMillis, limit > 0 ? ", saturated for " + saturatedTicks * TICK_MILLIS / 1000 + " s" : "");
        } else {
            quietTicks = 0;
            saturatedTicks = 0;
            limit = Math.min(Math.min(BUSY_SHARE, max), limit + CLIMB);
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
