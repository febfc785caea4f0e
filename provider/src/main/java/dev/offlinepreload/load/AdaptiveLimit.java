package dev.offlinepreload.load;

import java.util.Locale;

/**
 * How much of the node the loader takes, in workers: the load runs on a quiet node, takes a small share under steady
 * traffic, and stops while the node is behind. Every {@value #TICK_MILLIS} ms:
 * <ul>
 * <li>no request at work: once the node has been quiet for a second in a row, the limit doubles, up to every worker
 * (a load on an idle node runs at full speed: its own contention is nobody's loss). A gap between two requests is no
 * quiet node: under steady traffic, full speed in the gaps is what the next requests would meet. Until the pass has
 * seen a request it waits longer: a node that has just started or joined is quiet because its traffic has not reached
 * it yet, and a restarting cluster gets its traffic once its last node is ready. On a cluster warming up, even the
 * planning and the few batches that ran in the seconds before the traffic came raised the requests' p99 over stock's
 * (restart windows r and s of docs/performance.md, 2 quiet seconds counted from each node's own start). So it takes
 * {@value #STARTED_QUIET_TICKS} quiet ticks counted from the moment every member of the cluster has started (each
 * node says so in Keycloak's work cache when Keycloak has started on it), or {@value #FIRST_QUIET_TICKS} quiet ticks
 * in a row if that moment does not come (a member without this provider, or with preloading off, never says it). A
 * single node with no traffic thus loads 2 s after its start. A pass that begins after the coordinator's quiet start
 * has seen that quiet already and runs from its first quiet tick. Requests are counted as they arrive, so the first
 * one stops a load that began in that quiet within a tick (brings it down to the steady share, where one is set).</li>
 * <li>requests at work, the node keeping up with them: once for {@value #STEADY_TICKS} ticks in a row no request has
 * taken longer than {@link RequestWatch#SLOW_MILLIS} ms and at most {@link RequestWatch#STEADY_AT_WORK} have been at
 * work at a time, one worker a share of the time, up to {@code steadyShare} (steady-traffic-percent) and no more than
 * the requests bear ({@link SteadyShare}: the load pauses two seconds in ten to measure them without it), so that a
 * load under traffic that never pauses for a second still moves; the first slow request, or more at work, takes it
 * back to 0 and halves the share.</li>
 * <li>otherwise, the node behind (a restart's backlog): 0 at once. The restart windows of docs/performance.md showed
 * that any share the load takes while a backlog drains (even half a worker, and only while the node's threads found a
 * CPU at once) raised the requests' p99 two to four times for as long as the load ran, on a node warming up after a
 * restart.</li>
 * <li>after {@link #PATIENCE_TICKS} ticks (five minutes) without a quiet second the load keeps a floor, one worker
 * {@value #FLOOR} of the time, so that a load on a node that is never quiet nor steady still finishes.</li>
 * </ul>
 * Below 1 the limit is one worker's share of the time. Pure logic, fed by {@link LoadGovernor}.
 */
public final class AdaptiveLimit {

    /** How often the limit is updated. */
    static final int TICK_MILLIS = 100;
    /** The share the loader keeps once the node has not been quiet for the patience: one worker, this share of the time. */
    public static final double FLOOR = 0.02;
    /**
     * Ticks without a quiet second before the floor applies: five minutes, longer than a restart's backlog (a minute
     * on the benchmark's 2 cores), whose requests a floor that came after one minute still slowed.
     */
    static final int PATIENCE_TICKS = 300_000 / TICK_MILLIS;
    /** Ticks with no request at work, in a row, before the load speeds up: a second. */
    static final int QUIET_TICKS = 1_000 / TICK_MILLIS;
    /** The same before the pass has seen a request, counted from the moment every member has started: two seconds. */
    static final int STARTED_QUIET_TICKS = 2_000 / TICK_MILLIS;
    /** The same before the pass has seen a request, while not every member has said it started: ten seconds. */
    static final int FIRST_QUIET_TICKS = 10_000 / TICK_MILLIS;
    /** Ticks in a row of a node keeping up with its requests before the load takes its steady share: five seconds. */
    static final int STEADY_TICKS = 5_000 / TICK_MILLIS;
    /** Fewer request threads at work than this, on average over a tick, count as none. */
    static final double IDLE_REQUESTS = 0.05;

    private final double max;
    private final boolean adaptive;
    /** Null without a steady share. */
    private final SteadyShare steadyShare;
    private double limit;
    private int quietTicks;
    /** Quiet ticks in a row since every member has started. */
    private int startedQuietTicks;
    private int ticksWithoutQuiet;
    private int steadyTicks;
    private boolean sawRequest;
    private String reason;

    /**
     * @param workers  the most workers (workers-per-node)
     * @param adaptive false: always every worker (adaptive-load=false)
     */
    public AdaptiveLimit(int workers, boolean adaptive) {
        this(workers, adaptive, false, 0);
    }

    /**
     * @param quietSeen   whether the node has just been quiet for as long as a pass that has seen no request waits (the
     *                    coordinator's quiet start): then the first quiet tick lets the load run
     * @param steadyShare the share of one worker's time the load takes while the node keeps up with steady traffic,
     *                    0 to 1; 0 = none
     */
    public AdaptiveLimit(int workers, boolean adaptive, boolean quietSeen, double steadyShare) {
        this.max = workers;
        this.adaptive = adaptive;
        this.steadyShare = steadyShare > 0 ? new SteadyShare(Math.min(steadyShare, workers)) : null;
        // Adaptive, nothing runs until the node has been quiet.
        this.limit = adaptive ? 0 : max;
        this.reason = adaptive ? "starting" : "adaptive-load=false";
        if (quietSeen) {
            quietTicks = FIRST_QUIET_TICKS;
            startedQuietTicks = STARTED_QUIET_TICKS;
        }
    }

    /**
     * One tick's signals.
     *
     * @param busyRequests mean number of Keycloak request threads at work during the tick
     * @param keepingUp    whether during the tick no request finished later than {@link RequestWatch#SLOW_MILLIS} and
     *                     at most {@link RequestWatch#STEADY_AT_WORK} were at work at a time
     * @param lateMillis   mean scheduling delay during the tick (how late a short sleep woke up): for the reason only
     * @param allStarted   whether every member of the cluster has finished starting
     */
    public double update(double busyRequests, boolean keepingUp, double lateMillis, boolean allStarted) {
        return update(busyRequests, keepingUp, RequestWatch.Finished.NONE, lateMillis, allStarted);
    }

    /** One tick's signals, with the requests that finished during it ({@link SteadyShare} times them). */
    public synchronized double update(double busyRequests, boolean keepingUp, RequestWatch.Finished requests,
                                      double lateMillis, boolean allStarted) {
        if (!adaptive) {
            return limit;
        }
        boolean idle = busyRequests < IDLE_REQUESTS;
        sawRequest |= !idle;
        quietTicks = idle ? quietTicks + 1 : 0;
        startedQuietTicks = idle && allStarted ? startedQuietTicks + 1 : 0;
        steadyTicks = keepingUp && sawRequest ? steadyTicks + 1 : 0; // kept up with requests, not with none
        boolean quiet = sawRequest ? quietTicks >= QUIET_TICKS
                : startedQuietTicks >= STARTED_QUIET_TICKS || quietTicks >= FIRST_QUIET_TICKS;
        if (quiet) {
            ticksWithoutQuiet = 0;
            if (steadyShare != null) {
                steadyShare.interrupted(false);
            }
            limit = Math.min(max, limit < 1 ? 1 : limit * 2);
            reason = "no request at work";
            return limit;
        }
        ticksWithoutQuiet++;
        if (steadyShare != null) {
            if (steadyTicks >= STEADY_TICKS) {
                limit = Math.max(steadyShare.next(requests), floor());
                reason = String.format(Locale.ROOT, "%.1f requests at work, kept up with for %d s, %s", busyRequests,
                        steadyTicks * TICK_MILLIS / 1000, steadyShare.describe());
                return limit;
            }
            steadyShare.interrupted(!keepingUp);
        }
        if (idle) {
            if (!keepingUp && limit < 1) {
                limit = floor(); // a slow one finished just before this tick's first look
            }
            reason = "no request at work for " + quietTicks * TICK_MILLIS + " ms"
                    + (sawRequest || allStarted ? "" : ", not every node has started");
            return limit;
        }
        limit = floor();
        reason = String.format(Locale.ROOT, "%.1f requests at work, %s, threads %.1f ms late for a CPU%s", busyRequests,
                keepingUp ? "kept up with" : "behind", lateMillis,
                limit > 0 ? ", no quiet second for " + ticksWithoutQuiet * TICK_MILLIS / 1000 + " s" : "");
        return limit;
    }

    /** The floor once the patience has run out without a quiet second, else 0. */
    private double floor() {
        return ticksWithoutQuiet >= PATIENCE_TICKS ? Math.min(FLOOR, max) : 0;
    }

    public synchronized double limit() {
        return limit;
    }

    /** The limit and what it last reacted to, for the progress line. */
    public synchronized String describe() {
        return String.format(Locale.ROOT, "load limit %.2f of %d workers (%s)", limit, (int) max, reason);
    }
}
