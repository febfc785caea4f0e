package dev.offlinepreload;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.offlinepreload.cluster.ClusterGate;
import dev.offlinepreload.cluster.ClusterStart;
import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.config.ReadinessHold;
import dev.offlinepreload.load.AdaptiveLimit;
import dev.offlinepreload.load.ImportedSession;
import dev.offlinepreload.load.LoadGovernor;
import dev.offlinepreload.load.LoadRun;
import dev.offlinepreload.load.LoadStats;
import dev.offlinepreload.load.RateLimit;
import dev.offlinepreload.load.RequestWatch;
import dev.offlinepreload.load.Retry;
import dev.offlinepreload.load.RevocationGuard;
import dev.offlinepreload.load.SessionCount;
import dev.offlinepreload.load.SessionStore;
import dev.offlinepreload.plan.LoadPlan;
import dev.offlinepreload.plan.LoadPlanner;
import dev.offlinepreload.report.CapacityAdvice;
import dev.offlinepreload.report.CapacityLog;
import dev.offlinepreload.report.PreloadMetrics;
import dev.offlinepreload.report.PreloadState;
import dev.offlinepreload.report.ProgressLog;
import org.jboss.logging.Logger;

/**
 * One load pass per settled topology, on a background thread. With persistent sessions and adaptive-load the first
 * pass starts only once the node has been quiet ({@link #quietStarts}). A pass: gate
 * (both offline caches settled) → count (what the database holds against what the caches take) → plan (what this node
 * owns and does not hold whole, within that capacity) → run (workers, batches) → check (what the caches still hold of
 * it) → report (logs, metrics, and once per topology a WARN with the max-count values that would hold every session).
 * If the topology moves while loading, the pass stops and plans again for the new topology instead of finishing a
 * stale plan. After a pass it watches the topology: when nodes join, leave or merge back, the next pass loads only what
 * this node newly owns or lost (what it holds whole is skipped by the plan).
 * It depends on the loader's ports only ({@link SessionStore}), so its control flow is unit-tested with fakes.
 */
public final class PreloadCoordinator implements AutoCloseable {

    /** Most sessions of a stage the check after a pass looks at; see {@link #missing}. */
    static final int MISSING_CHECK_SAMPLE = 100_000;

    private static final Logger log = Logger.getLogger(PreloadCoordinator.class);
    private static final Duration WATCH_INTERVAL = Duration.ofSeconds(1);
    /**
     * With persistent sessions and adaptive-load, how long the node must have had no request, once it has seen one,
     * before the first pass starts at all (see {@link #quietStarts}); looked at {@value #QUIET_START_LOOKS} times
     * over that time. Every wait of the quiet start is counted in these looks, quiet-start-seconds too, so a shorter
     * quiet start (the unit tests') shortens them all alike.
     */
    static final Duration QUIET_START = Duration.ofSeconds(10);
    private static final int QUIET_START_LOOKS = 20;
    /**
     * How many more looks than quiet-start-seconds the quiet start waits before the node has seen a request, once the
     * expected members have joined but not every one has said it started: 25 s. Members join 10–20 s before they have
     * started, and a peer without this provider never says so; a load that began while they were still starting met
     * the restart's first requests (the node that started first, in restart window an). While fewer than expected
     * have joined, the quiet start waits up to join-timeout-seconds.
     */
    private static final int UNSTARTED_EXTRA_LOOKS = 50;
    /**
     * The longest the quiet start waits, in quiet starts: five minutes. A node that is never quiet for 10 s then starts
     * its pass anyway, whose governor keeps a floor after five more minutes without a quiet second, so every load
     * finishes.
     */
    static final int QUIET_START_PATIENCE = 30;
    /**
     * How much longer than database-timeout-seconds close() waits for the threads: the connection's read timeout
     * comes a few seconds after the query timeout, and the statement's failure is then rolled back.
     */
    private static final Duration STOP_MARGIN = Duration.ofSeconds(15);

    /** How one pass for one topology ended. */
    enum PassOutcome {
        /** The plan was worked through (or capacity reached); the node holds its share. */
        DONE,
        /** The topology moved while loading: plan again once it settles. */
        TOPOLOGY_MOVED,
        /** The database failed for longer than database-retry-seconds; the next topology change tries again. */
        FAILED,
        /** The node is shutting down. */
        SHUT_DOWN
    }

    private final PreloadConfig config;
    private final SessionStore store;
    private final PreloadMetrics metrics;
    private final RevocationGuard guard;
    private final CapacityLog capacityLog;
    private final Duration quietStart;
    private final ExecutorService passes = Executors.newSingleThreadExecutor(r -> daemon(r, "offline-preload-coordinator"));
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "offline-preload-progress"));
    private final CompletableFuture<Void> firstPass = new CompletableFuture<>();
    /** Completes once the first pass's hot tier is loaded, or once startup is not to wait for it; see {@link #hotTierLoaded}. */
    private final CompletableFuture<Void> hotTier = new CompletableFuture<>();
    private volatile boolean closing;
    /** What the last completed pass found missing afterwards, for the one repair pass; written by the pass thread. */
    private Shortfall lastShortfall = Shortfall.NONE;

    /**
     * Sessions a pass put that the caches no longer hold whole when it ends, and of their client sessions those gone.
     */
    record Shortfall(long sessions, long clientSessions) {
        static final Shortfall NONE = new Shortfall(0, 0);
        static final Shortfall UNCHECKED = new Shortfall(-1, -1);
    }

    public PreloadCoordinator(PreloadConfig config, SessionStore store, PreloadMetrics metrics) {
        this(config, store, metrics, new CapacityLog(), QUIET_START);
    }

    PreloadCoordinator(PreloadConfig config, SessionStore store, PreloadMetrics metrics, CapacityLog capacityLog,
                       Duration quietStart) {
        this.config = config;
        this.store = store;
        this.metrics = metrics;
        this.capacityLog = capacityLog;
        this.quietStart = quietStart;
        this.guard = new RevocationGuard(store, config.revocationRecheck());
    }

    /**
     * Starts loading in the background and keeps re-warming on topology changes until {@link #close()}.
     *
     * @return completes when the first pass has finished, whatever its outcome
     */
    public CompletableFuture<Void> start() {
        if (config.holdReadiness() != ReadinessHold.AUTO || !hotFirst()) {
            hotTier.complete(null);
        } else if (store.clusterStart(config.expectedClusterSize()) == ClusterStart.FORMING) {
            log.infof("Offline session preload on %s: startup does not wait for the recently refreshed sessions, as "
                    + "fewer than the %d expected nodes have joined", store.nodeName(), config.expectedClusterSize());
            hotTier.complete(null);
        }
        passes.submit(this::watch);
        return firstPass;
    }

    /**
     * What startup waits for with hold-readiness=auto: completes once the first pass's hot stage has ended, whatever
     * its outcome (or there is none). Complete from {@link #start()} on where there is no hot stage to wait for (persistent
     * sessions, no hot window, another hold-readiness), or where fewer than the expected nodes have joined: a node that
     * held its startup until others joined would hold them back where nodes start one by one (Kubernetes' default for
     * a StatefulSet), and the first node of a full restart would serve nothing until the last had joined.
     */
    public CompletableFuture<Void> hotTierLoaded() {
        return hotTier;
    }

    /** Where a cached session saves a request its database reads (volatile sessions), the hot tier comes first. */
    private boolean hotFirst() {
        return store.volatileSessions() && !config.hotWindow().isZero();
    }

    private void watch() {
        long loadedFor = Long.MIN_VALUE;
        long began = System.nanoTime();
        try {
            boolean quietSeen = false;
            // The quiet start's view of the requests goes on to the first pass's governor, so that a request that
            // arrives between the quiet start's last look and the governor's first is not lost between two views.
            RequestWatch requests = null;
            if (quietStarts()) {
                requests = store.newRequestWatch();
                QuietStart waited = awaitQuietStart(requests);
                if (waited == QuietStart.SHUT_DOWN) {
                    return;
                }
                quietSeen = waited == QuietStart.QUIET;
            }
            while (!closing) {
                TopologySnapshot now = store.topology();
                if (now.id() != loadedFor) {
                    // Only the first pass waits for the expected cluster size; a re-warm just needs a settled topology.
                    boolean first = !firstPass.isDone();
                    // The first pass's join timeout counts from the start, the quiet start's wait included.
                    loadedFor = first ? pass(config.expectedClusterSize(), config.joinTimeout(), began, quietSeen, requests)
                            : pass(1, Duration.ZERO, System.nanoTime(), false, null);
                    hotTier.complete(null); // a pass that failed before its hot stage holds startup no longer
                    firstPass.complete(null);
                } else {
                    Thread.sleep(WATCH_INTERVAL.toMillis());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            hotTier.complete(null);
            firstPass.complete(null);
        }
    }

    /**
     * Whether the first pass starts only once the node has been quiet ({@link #awaitQuietStart}): with persistent sessions
     * (Keycloak's default) and adaptive-load, unless startup waits for the load (hold-readiness=true). There a cached session
     * saves a refresh or an introspection no database statement (each reads the rows anyway), so nothing is lost by
     * waiting, and the load waits for a quiet node anyway ({@link AdaptiveLimit}). Until then this provider runs nothing
     * but two looks per second at the request count: no gate polling the topology, no governor, no count, no plan. In the
     * restart windows of docs/performance.md a node whose pass waited in the gate and the governor instead served its
     * first 40 s of traffic slower than the same node with preloading off (runs ag and ah).
     */
    private boolean quietStarts() {
        return config.adaptiveLoad() && config.holdReadiness() != ReadinessHold.TRUE && !store.volatileSessions();
    }

    /** How the quiet start ended. */
    enum QuietStart {
        /** The node was quiet: the first pass loads from its first quiet tick. */
        QUIET,
        /** The node was never quiet for long enough within the patience: the pass begins, and its governor waits. */
        PATIENCE_RAN_OUT,
        /** The node is shutting down. */
        SHUT_DOWN
    }

    /**
     * Waits, looking at the request counter {@value #QUIET_START_LOOKS} times per {@link #QUIET_START}, until the node
     * has had no request: for quiet-start-seconds since every one of the expected-cluster-size nodes said it started,
     * 25 s longer since they all joined if not every one says so, or for 10 s once it has seen a request. While fewer
     * than expected have joined, up to join-timeout-seconds (the gate then waits only what is left of it). Asks how far
     * the cluster has come only until it has started, and not after a request: a node that serves traffic waits for 10
     * quiet seconds, as in the restart windows that measured it.
     * <p>
     * quiet-start-seconds is 30 by default because a pass that ran before the traffic came made the restart's first
     * 10 s worse than with preloading=false, whether the traffic came as the pass began (a 3-s wait, restart window
     * aq) or 8 s after every node was ready, as behind a load balancer that admits nodes late (a 5-s wait, window as);
     * a pass that waits for the first request and then for quiet runs only when the node would otherwise idle. It costs
     * a restart without traffic that wait, and so 0 is the setting for one.
     */
    private QuietStart awaitQuietStart(RequestWatch requests) throws InterruptedException {
        metrics.state(PreloadState.WAITING_FOR_QUIET);
        int startedLooks = Math.max(1, (int) (config.quietStart().toSeconds() * QUIET_START_LOOKS / QUIET_START.toSeconds()));
        int unstartedLooks = startedLooks + UNSTARTED_EXTRA_LOOKS;
        log.infof("Offline session preload on %s starts once the node has had no request for %s after all %d nodes have "
                + "started (quiet-start-seconds), %s without that signal, %s after a request (persistent sessions, "
                + "adaptive-load)", store.nodeName(), span(quietStart.multipliedBy(startedLooks).dividedBy(QUIET_START_LOOKS)),
                config.expectedClusterSize(), span(quietStart.multipliedBy(unstartedLooks).dividedBy(QUIET_START_LOOKS)),
                span(quietStart));
        long lookMillis = Math.max(1, quietStart.toMillis() / QUIET_START_LOOKS);
        long joinLooks = config.joinTimeout().toMillis() / lookMillis;
        int quiet = 0;
        int startedQuiet = 0;
        int joinedQuiet = 0;
        boolean sawRequest = false;
        boolean saidForming = false;
        ClusterStart cluster = ClusterStart.FORMING;
        for (int looks = 1; !closing; looks++) {
            Thread.sleep(lookMillis);
            boolean idle = requests.busy() == 0;
            sawRequest |= !idle;
            quiet = idle ? quiet + 1 : 0;
            if (!sawRequest && cluster != ClusterStart.STARTED) {
                cluster = store.clusterStart(config.expectedClusterSize());
                if (cluster == ClusterStart.FORMING && !saidForming) {
                    saidForming = true;
                    log.infof("Offline session preload on %s waits for %d nodes to join and start (at most %d s, "
                            + "join-timeout-seconds)", store.nodeName(), config.expectedClusterSize(),
                            config.joinTimeout().toSeconds());
                }
            }
            startedQuiet = idle && cluster == ClusterStart.STARTED ? startedQuiet + 1 : 0;
            joinedQuiet = idle && cluster != ClusterStart.FORMING ? joinedQuiet + 1 : 0;
            if (sawRequest ? quiet >= QUIET_START_LOOKS
                    : startedQuiet >= startedLooks || joinedQuiet >= unstartedLooks
                    || looks >= joinLooks && quiet >= unstartedLooks) {
                log.debugf("Offline session preload on %s: no request for %s, the first pass begins", store.nodeName(),
                        span(Duration.ofMillis(lookMillis * quiet)));
                return QuietStart.QUIET;
            }
            // A quiet node that waits for its cluster to form waits up to join-timeout-seconds instead (above).
            if (looks >= QUIET_START_LOOKS * QUIET_START_PATIENCE && quiet < QUIET_START_LOOKS) {
                log.infof("Offline session preload on %s: the node has not been quiet for %s in %s; the first pass "
                        + "begins all the same, loading only in quiet seconds or at its floor", store.nodeName(),
                        span(quietStart), span(quietStart.multipliedBy(QUIET_START_PATIENCE)));
                return QuietStart.PATIENCE_RAN_OUT;
            }
        }
        return QuietStart.SHUT_DOWN;
    }

    /** "10 s", or "300 ms" for the short waits of the unit tests. */
    private static String span(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + " s" : duration.toMillis() + " ms";
    }

    /**
     * @param joinSince when the join timeout began ({@link System#nanoTime()})
     * @param quietSeen whether the quiet start has just seen the node quiet: its first governor need not wait again
     * @param requests  the quiet start's view of the requests, for the first governor; null: a view of its own
     * @return the topology id the pass ended for (a failed pass counts: no retry loop until the next change)
     */
    private long pass(int expectedMembers, Duration joinTimeout, long joinSince, boolean quietSeen,
                      RequestWatch requests) {
        long start = System.nanoTime();
        metrics.state(PreloadState.WAITING_FOR_NODES);
        ClusterGate gate = new ClusterGate(store.nodeName(), store::topology, () -> closing);
        TopologySnapshot topology = null;
        PassOutcome outcome = PassOutcome.SHUT_DOWN;
        try {
            topology = gate.await(expectedMembers, joinTimeout, joinSince);
            boolean repaired = false;
            while (topology != null) {
                outcome = loadFor(topology, quietSeen, requests != null ? requests : store.newRequestWatch());
                quietSeen = false;
                requests = null;
                if (outcome == PassOutcome.DONE && lastShortfall.sessions() > 0 && !repaired) {
                    // Something took entries from under the pass (a clear, a rebalance, eviction): load what is
                    // missing once more, and report that pass too. Only once: a cache that keeps dropping entries
                    // is reported, not fought.
                    repaired = true;
                    log.warnf("Offline session preload on %s: %d sessions (%d client sessions) loaded by the pass are no "
                            + "longer cached; loading what is missing once more", store.nodeName(),
                            lastShortfall.sessions(), lastShortfall.clientSessions());
                    continue;
                }
                if (outcome != PassOutcome.TOPOLOGY_MOVED) {
                    break;
                }
                log.infof("Offline session preload on %s: the cluster topology changed while loading; planning again",
                        store.nodeName());
                topology = gate.await(1, Duration.ZERO);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // close(): the outcome stays SHUT_DOWN
        } catch (RuntimeException | Error e) {
            if (closing) {
                // close() shut the pass's executors down under it (a re-warm that began as the node stopped, its
                // statement in flight heedless of the interrupt): that is the stop close() reports, not a failure.
                log.debugf(e, "Offline session preload on %s: the pass ended as the node shut down", store.nodeName());
            } else {
                // A failed preload must never take the node down: requests keep loading sessions lazily.
                outcome = PassOutcome.FAILED;
                log.errorf(e, "Offline session preload on %s failed; sessions are loaded lazily until the next topology change",
                        store.nodeName());
            }
        }
        metrics.passCompleted((System.nanoTime() - start) / 1_000_000);
        metrics.state(switch (outcome) {
            case DONE -> PreloadState.DONE;
            case FAILED -> PreloadState.FAILED;
            case SHUT_DOWN, TOPOLOGY_MOVED -> PreloadState.IDLE;
        });
        return topology == null ? store.topologyId() : topology.id();
    }

    /**
     * The pass for one topology under one governor, in up to two stages. Where a cached session saves a request its
     * database reads (volatile sessions) and a hot window is set, the hot tier comes first: planned from its own
     * indexed query and loaded whatever requests do ({@link #loadHot}). Everything else, planning included (a scan of
     * every key and the capacity count: seconds of CPU on a cold node), waits for the governor, as it is CPU that a
     * node's first requests would otherwise meet. The check after the pass covers both stages.
     */
    private PassOutcome loadFor(TopologySnapshot topology, boolean quietSeen, RequestWatch requests)
            throws InterruptedException {
        boolean hotFirst = hotFirst();
        BooleanSupplier stopped = () -> closing || store.topologyId() != topology.id();
        RateLimit rate = new RateLimit(config.maxSessionsPerSecond(), System::nanoTime);
        List<LoadStats> stages = new ArrayList<>(2);
        // Removals are watched from the first stage's load on, not earlier: the window keeps every removal until it
        // closes, and a node may wait minutes for a quiet second. With a hot stage, from before its load (below).
        AdaptiveLimit limit = new AdaptiveLimit(config.workers(), config.adaptiveLoad(), quietSeen,
                config.steadyTrafficPercent() / 100.0);
        try (LoadGovernor governor = new LoadGovernor(limit, requests,
                () -> store.clusterStart(topology.members().size()) == ClusterStart.STARTED, metrics::loadLimit,
                hotFirst).start();
             SessionStore.RemovalWindow removals = hotFirst ? store.watchRemovals() : null) {
            if (hotFirst) {
                PassOutcome ended;
                try {
                    ended = loadHot(topology, governor, rate, stopped, stages);
                } finally {
                    hotTier.complete(null);
                }
                if (ended != null) {
                    return ended;
                }
            }
            if (config.adaptiveLoad() && !quietSeen) {
                log.infof("Offline session preload on %s plans and loads %sonce the node is quiet (adaptive-load: no "
                        + "request at work for 2 s after all %d nodes have started, or for 10 s; for 1 s after requests)%s",
                        store.nodeName(), stages.isEmpty() ? "" : "the rest ", topology.members().size(),
                        config.steadyTrafficPercent() == 0 ? "" : ", or with up to " + config.steadyTrafficPercent()
                                + "% of one worker while it keeps up with steady traffic (steady-traffic-percent)");
            }
            if (!governor.awaitTurn(1, () -> false, stopped)) {
                return closing ? PassOutcome.SHUT_DOWN : PassOutcome.TOPOLOGY_MOVED;
            }
            return loadRest(topology, governor, rate, stopped, removals, stages);
        }
    }

    /**
     * The hot tier's stage (volatile sessions): planned from the sessions refreshed within hot-window-seconds alone
     * ({@link LoadPlanner#planHot}: no scan of every key, no count), so that what runs while requests are at work
     * grows with the hot tier, not with the database, and loaded on the first worker whatever the governor says. A
     * plan over every id with the count took about a third of a cold node's CPU in its first 20 s under traffic that
     * the hot tier did not cover (benchmark/results/restart-window-2026-11-27-x.md).
     *
     * @return null to go on with the rest; otherwise how the pass ended
     */
    private PassOutcome loadHot(TopologySnapshot topology, LoadGovernor governor, RateLimit rate,
                                BooleanSupplier stopped, List<LoadStats> stages) throws InterruptedException {
        LoadPlan plan;
        try {
            plan = new Retry(config.databaseRetry(), stopped).call("reading the recently refreshed session ids",
                    () -> new LoadPlanner(topology.owns(), store::isCached, ceiling(topology), config.batchSize())
                            .planHot(recent -> store.forEachRecent(config.hotWindow(), recent)));
        } catch (Retry.GaveUp e) {
            return planningGaveUp(topology, e);
        }
        if (plan.toLoad() == 0) {
            return null;
        }
        metrics.planned(plan.toLoad());
        metrics.state(PreloadState.LOADING);
        ProgressLog progress = new ProgressLog(store.nodeName());
        progress.startedHot(plan, config.hotWindow());
        LoadStats stats = stats(plan);
        stages.add(stats);
        LoadRun.Outcome outcome = run(plan, governor, rate, stopped, progress, stats);
        if (outcome == LoadRun.Outcome.COMPLETE || outcome == LoadRun.Outcome.CAPACITY) {
            progress.finished(stats, outcome == LoadRun.Outcome.COMPLETE ? "loaded its recently refreshed sessions first"
                    : "reached this node's capacity with its recently refreshed sessions", -1, -1);
            return null;
        }
        return notCompleted(outcome, progress, stats);
    }

    /**
     * Plans what this node owns and does not hold (the hot tier first, unless its own stage loaded it), loads it, and
     * checks what the caches still hold of this pass's sessions.
     *
     * @param removals the hot stage's removal window, or null: then one opens for this stage's load
     */
    private PassOutcome loadRest(TopologySnapshot topology, LoadGovernor governor, RateLimit rate, BooleanSupplier stopped,
                                 SessionStore.RemovalWindow removals, List<LoadStats> stages) throws InterruptedException {
        // With the start line of the load ("loading N sessions"), which ends planning: the planning time, and the
        // benchmark's window for the planner's heap.
        log.debugf("Offline session preload on %s: planning for cluster topology %d (%d nodes)", store.nodeName(),
                topology.id(), topology.members().size());
        // Planning stops as soon as the governor pauses the load (requests at work), and plans again from the start
        // once it lets the load run: a node's first requests after a restart came while a pass planned, and its key
        // scan and reads (seconds of CPU on a cold node) made their p99 1.3–4× stock's
        // (benchmark/results/restart-window-2026-11-26-o.md).
        boolean yields = config.adaptiveLoad();
        AtomicBoolean yielded = new AtomicBoolean();
        Retry planning = new Retry(config.databaseRetry(), () -> yielded.get() || stopped.getAsBoolean());
        // The count (three aggregates over both tables, about 1 s of PostgreSQL time per 1M sessions) runs when the
        // planner asks for the limit: once the keys have streamed with no request at work. Begun beside the key
        // stream, as until 2026-11-30, it ran on after the requests that made planning yield had come: in 5 of the
        // 24 volatile restarts of the 1M matrix, one to three nodes' counts finished after every node was ready, up
        // to 23 s of PostgreSQL statement time; in the four where all three nodes' did, the first 10 s were slower
        // than in every other restart of the defaults in the same cell (p99 6.9-9.3 s against 3.9-5.3 s).
        // Once, however often planning yields; not once the pass is stopped (it plans with the cache's limit, then ends).
        AtomicBoolean countRan = new AtomicBoolean();
        AtomicReference<CapacityAdvice> advice = new AtomicReference<>();
        Supplier<CapacityAdvice> counted = () -> {
            if (!stopped.getAsBoolean() && !countRan.getAndSet(true)) {
                advice.set(capacity(topology));
            }
            return advice.get();
        };
        LoadPlan planned;
        try {
            LoadPlanner planner = new LoadPlanner(topology.owns(), store::isCached, ceiling(topology), () -> {
                CapacityAdvice capacity = counted.get();
                return topology.planned(capacity == null ? config.fillLimit(store.sessionsMaxCount()) : capacity.nodeCapacity());
            }, config.batchSize());
            while (true) {
                try {
                    planned = planning.call("reading the session ids", () -> planner.plan(
                            keys -> store.forEachKey(yielding(keys, governor, yields, yielded)),
                            candidates -> store.forEachCandidate(yielding(candidates, governor, yields, yielded)),
                            recent -> {
                                // After a hot stage this finds its sessions cached: they count as such, not as hot.
                                if (!config.hotWindow().isZero()) {
                                    store.forEachRecent(config.hotWindow(), yielding(recent, governor, yields, yielded));
                                }
                            }));
                    break;
                } catch (Retry.GaveUp e) {
                    if (!yielded.getAndSet(false) || stopped.getAsBoolean()) {
                        throw e;
                    }
                    log.debugf("Offline session preload on %s: requests came while planning; planning again once the "
                            + "node is quiet", store.nodeName());
                    if (!governor.awaitTurn(1, () -> false, stopped)) {
                        return closing ? PassOutcome.SHUT_DOWN : PassOutcome.TOPOLOGY_MOVED;
                    }
                }
            }
        } catch (Retry.GaveUp e) {
            return planningGaveUp(topology, e);
        }
        if (stopped.getAsBoolean()) {
            // The topology moved or the node began to shut down while the last statement of planning ran.
            return closing ? PassOutcome.SHUT_DOWN : PassOutcome.TOPOLOGY_MOVED;
        }
        LoadPlan plan = planned;
        CapacityAdvice capacity = counted.get();
        metrics.planned(stages.stream().mapToLong(LoadStats::processed).sum() + plan.toLoad());
        metrics.state(PreloadState.LOADING);

        ProgressLog progress = new ProgressLog(store.nodeName());
        progress.started(plan, "mode " + store.sessionMode() + ", settings " + config.describe());
        LoadStats stats = stats(plan);
        stages.add(stats);
        LoadRun.Outcome outcome;
        Shortfall missing = Shortfall.UNCHECKED;
        try (SessionStore.RemovalWindow own = removals == null ? store.watchRemovals() : null) {
            outcome = run(plan, governor, rate, stopped, progress, stats);
            if (outcome == LoadRun.Outcome.COMPLETE || outcome == LoadRun.Outcome.CAPACITY) {
                missing = missing(stages, removals == null ? own : removals);
                if (store.topologyId() != topology.id()) {
                    // The topology moved while the pass was checked: what moved away is no loss, and the new one gets a plan.
                    outcome = LoadRun.Outcome.STOPPED;
                }
            }
        }
        if (outcome != LoadRun.Outcome.COMPLETE && outcome != LoadRun.Outcome.CAPACITY) {
            return notCompleted(outcome, progress, stats);
        }
        lastShortfall = missing;
        metrics.missing(missing.sessions(), missing.clientSessions());
        progress.finished(stats, outcome == LoadRun.Outcome.COMPLETE ? "finished" : "stopped at this node's capacity",
                missing.sessions(), missing.clientSessions());
        if (capacity != null) {
            long notReached = outcome == LoadRun.Outcome.CAPACITY ? plan.toLoad() - stats.processed() : 0;
            // where every node reads every session, only the share of them whose entries this node keeps
            long leftOut = Math.round((plan.overCapacity() + notReached) * Math.min(1, topology.keptShare()));
            capacityLog.afterPass(topology.id(), capacity, store.nodeName(), leftOut,
                    topology.members().size() >= config.expectedClusterSize());
        }
        return PassOutcome.DONE;
    }

    /**
     * The most sessions a node may plan. With several client sessions per session the client-session cache may hold
     * fewer sessions than the sessions cache: the plan keeps the most recent of what really fits. Either way a node
     * takes no more sessions than either cache holds (a session has at least one client session). Where a node reads
     * every session and keeps its share of their entries (Keycloak 26.4), it may plan that many more.
     */
    private long ceiling(TopologySnapshot topology) {
        return topology.planned(Math.min(config.fillLimit(store.sessionsMaxCount()),
                config.cacheLimit(store.clientSessionsMaxCount())));
    }

    /** A stage's counters, keeping an even sample of at most {@value #MISSING_CHECK_SAMPLE} sessions for the check. */
    private LoadStats stats(LoadPlan plan) {
        return new LoadStats(metrics.lifetime(), Math.max(1, (plan.toLoad() + MISSING_CHECK_SAMPLE - 1) / MISSING_CHECK_SAMPLE));
    }

    /** Runs a stage's plan with the progress line ticking; a database outage is logged here. */
    private LoadRun.Outcome run(LoadPlan plan, LoadGovernor governor, RateLimit rate, BooleanSupplier stopped,
                                ProgressLog progress, LoadStats stats) throws InterruptedException {
        long clientLimit = Math.max(0, config.cacheLimit(store.clientSessionsMaxCount()) - store.localClientSessions());
        LoadRun run = new LoadRun(store, config.workers(), new Retry(config.databaseRetry(), stopped), rate, governor,
                guard, progress, stopped);
        var ticking = ticker.scheduleAtFixedRate(() -> progress.progress(stats, plan.toLoad(), governor.describe()), 1, 1,
                TimeUnit.SECONDS);
        LoadRun.Outcome outcome;
        try {
            outcome = run.run(plan.batches(), clientLimit, stats);
        } finally {
            ticking.cancel(false);
        }
        if (outcome == LoadRun.Outcome.DATABASE_UNAVAILABLE) {
            log.errorf("Offline session preload on %s gave up: the database kept failing for %d s (%s). The sessions "
                    + "not loaded are loaded lazily; preloading tries again at the next topology change.",
                    store.nodeName(), config.databaseRetry().toSeconds(), run.databaseError());
        }
        return outcome;
    }

    /** The summary and outcome of a stage that did not work through its plan. */
    private PassOutcome notCompleted(LoadRun.Outcome outcome, ProgressLog progress, LoadStats stats) {
        if (outcome == LoadRun.Outcome.STOPPED) {
            progress.finished(stats, closing ? "stopped by shutdown" : "stopped by a topology change", -1, -1);
            return closing ? PassOutcome.SHUT_DOWN : PassOutcome.TOPOLOGY_MOVED;
        }
        progress.finished(stats, "gave up", -1, -1);
        return PassOutcome.FAILED;
    }

    /** How a pass ends whose planning gave up: shutdown, a topology change, or the database. */
    private PassOutcome planningGaveUp(TopologySnapshot topology, Retry.GaveUp e) {
        if (closing) {
            return PassOutcome.SHUT_DOWN;
        }
        if (store.topologyId() != topology.id()) {
            return PassOutcome.TOPOLOGY_MOVED;
        }
        log.errorf("Offline session preload on %s failed: the database kept failing for %d s while planning (%s). "
                + "Sessions are loaded lazily; preloading tries again at the next topology change.",
                store.nodeName(), config.databaseRetry().toSeconds(), e.getMessage());
        return PassOutcome.FAILED;
    }

    /**
     * The sink, unless planning yields and the governor has paused the load: then the stream stops (planning gives up
     * at once, {@code yielded} says why).
     */
    private static <T> Consumer<T> yielding(Consumer<T> sink, LoadGovernor governor, boolean yields, AtomicBoolean yielded) {
        if (!yields) {
            return sink;
        }
        return item -> {
            if (governor.paused()) {
                yielded.set(true);
                throw new PlanningYielded();
            }
            sink.accept(item);
        };
    }

    /** Stops a stream of planning when requests came (see {@link #yielding}). */
    private static final class PlanningYielded extends RuntimeException {
        PlanningYielded() {
            super("requests at work", null, false, false);
        }
    }

    /**
     * Counts the non-expired sessions in the database and compares them with what the cluster's caches take; sets the
     * gauges. After the pass, the same advice goes to the WARN (once per topology) if they do not fit.
     *
     * @return null if the database did not answer: the pass plans with the sessions cache's limit alone and the
     *         gauges stay as they were. Tried once: planning, right after, owns the pass's database retry budget.
     */
    private CapacityAdvice capacity(TopologySnapshot topology) {
        SessionCount database;
        try {
            database = store.countSessions();
        } catch (RuntimeException e) {
            log.warnf("Offline session preload on %s: could not count the sessions in the database for the capacity "
                    + "check (%s)", store.nodeName(), e.getMessage());
            return null;
        }
        CapacityAdvice advice = CapacityAdvice.of(database, topology, store.sessionsMaxCount(),
                store.clientSessionsMaxCount(), config);
        metrics.capacity(database.sessions(), advice.nodeCapacity());
        return advice;
    }

    /**
     * What the pass achieved: sessions it put whose entry, or one of the client sessions it put for them, the caches no
     * longer hold now, though nobody removed them (a logout, a revocation or the loader's own eviction during the pass
     * is no loss; Keycloak's clear of the caches after a partition merge is). A cache that drops entries after they
     * were put (a clear, a rebalance finishing, eviction) shows up here instead of going unnoticed. Both stages of a
     * pass are checked (the hot tier's too). Over {@value #MISSING_CHECK_SAMPLE} sessions of a stage an even sample of
     * them is checked and the counts scaled: the whole check cost about 4 s per 1M sessions, a tenth of the pass, for a
     * figure that is expected to be 0.
     */
    private Shortfall missing(List<LoadStats> stages, SessionStore.RemovalWindow removals) {
        double sessions = 0;
        double clientSessions = 0;
        for (LoadStats stats : stages) {
            List<ImportedSession> sample = stats.importedSample();
            long sessionsGone = 0;
            long clientSessionsGone = 0;
            for (ImportedSession session : sample) {
                if (removals.removed(session.id())) {
                    continue;
                }
                int clientsGone = store.missingClientSessions(session);
                if (clientsGone > 0 || session.entryHere() && !store.isCached(session.id())) {
                    sessionsGone++;
                    clientSessionsGone += clientsGone;
                }
            }
            double scale = sample.isEmpty() ? 0 : (double) stats.imported() / sample.size();
            sessions += sessionsGone * scale;
            clientSessions += clientSessionsGone * scale;
        }
        return new Shortfall(Math.round(sessions), Math.round(clientSessions));
    }

    /**
     * Stops every thread the coordinator started, and waits for them: a statement in flight ends within
     * database-timeout-seconds (and its margin) even on a hung database, and nothing of this provider writes into
     * the caches after this returns. Safe to call more than once, from a shutdown hook and from the factory.
     */
    @Override
    public synchronized void close() {
        if (closing) {
            return; // closed already (the shutdown hook and the factory both call it; the second waits for the first)
        }
        closing = true;
        hotTier.complete(null); // a startup held for the hot tier or the first pass goes on at once
        firstPass.complete(null);
        passes.shutdownNow();
        ticker.shutdownNow();
        try {
            guard.close();
        } finally {
            Duration limit = config.databaseTimeout().plus(STOP_MARGIN);
            long deadline = System.nanoTime() + limit.toNanos();
            try {
                if (!passes.awaitTermination(limit.toMillis(), TimeUnit.MILLISECONDS)
                        || !guard.awaitTermination(millisUntil(deadline))) {
                    log.warnf("Offline session preload on %s did not stop within %d s of shutdown", store.nodeName(),
                            limit.toSeconds());
                } else {
                    log.infof("Offline session preload on %s stopped: the node is shutting down", store.nodeName());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static long millisUntil(long deadlineNanos) {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
