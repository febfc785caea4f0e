package dev.offlinepreload;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.offlinepreload.cluster.ClusterGate;
import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.keycloak.KeycloakSessionStore;
import dev.offlinepreload.load.Backoff;
import dev.offlinepreload.load.LoadRun;
import dev.offlinepreload.load.LoadStats;
import dev.offlinepreload.load.RevocationRecheck;
import dev.offlinepreload.plan.LoadPlan;
import dev.offlinepreload.plan.LoadPlanner;
import dev.offlinepreload.report.PreloadMetrics;
import dev.offlinepreload.report.PreloadState;
import dev.offlinepreload.report.ProgressLog;
import org.jboss.logging.Logger;

/**
 * One load pass per settled topology, on a background thread: gate (topology settled) → plan (what this node owns,
 * most recent first, within capacity) → run (workers, batches) → report (logs, metrics). If the topology moves while
 * loading, the pass stops and plans again for the new topology instead of finishing a stale plan. After a pass it
 * watches the topology: when nodes join or leave, the next pass loads only what this node newly owns (what it
 * already holds is skipped by the plan).
 */
public final class PreloadCoordinator implements AutoCloseable {

    private static final Logger log = Logger.getLogger(PreloadCoordinator.class);
    private static final Duration WATCH_INTERVAL = Duration.ofSeconds(1);

    private final PreloadConfig config;
    private final KeycloakSessionStore store;
    private final PreloadMetrics metrics;
    private final ExecutorService passes = Executors.newSingleThreadExecutor(r -> daemon(r, "offline-preload-coordinator"));
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "offline-preload-progress"));
    /** Second revocation checks run here, so a pass ends (and the next can start) without waiting for them. */
    private final ExecutorService rechecks = Executors.newSingleThreadExecutor(r -> daemon(r, "offline-preload-recheck"));
    private final java.util.Set<RevocationRecheck> pendingRechecks = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final CompletableFuture<Void> firstPass = new CompletableFuture<>();
    private volatile boolean closing;

    public PreloadCoordinator(PreloadConfig config, KeycloakSessionStore store, PreloadMetrics metrics) {
        this.config = config;
        this.store = store;
        this.metrics = metrics;
    }

    /**
     * Starts loading in the background and keeps re-warming on topology changes until {@link #close()}.
     *
     * @return completes when the first pass has finished, whatever its outcome
     */
    public CompletableFuture<Void> start() {
        passes.submit(this::watch);
        return firstPass;
    }

    private void watch() {
        int loadedFor = Integer.MIN_VALUE;
        try {
            while (!closing) {
                TopologySnapshot now = store.topology();
                if (now.id() != loadedFor) {
                    // Only the first pass waits for the expected cluster size; a re-warm just needs a settled topology.
                    boolean first = !firstPass.isDone();
                    loadedFor = pass(first ? config.expectedClusterSize() : 1, first ? config.joinTimeout() : Duration.ZERO);
                    firstPass.complete(null);
                } else {
                    Thread.sleep(WATCH_INTERVAL.toMillis());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            firstPass.complete(null);
        }
    }

    /** @return the topology id the pass completed for (a failed pass counts: no retry loop until the next change) */
    private int pass(int expectedMembers, Duration joinTimeout) throws InterruptedException {
        long start = System.nanoTime();
        TopologySnapshot topology = null;
        try {
            metrics.state(PreloadState.WAITING_FOR_NODES);
            boolean complete = false;
            while (!closing && !complete) {
                topology = new ClusterGate(store.nodeName(), store::topology, () -> closing).await(expectedMembers, joinTimeout);
                expectedMembers = 1; // after a topology change mid-pass, plan again as soon as it settles
                if (topology == null) {
                    return Integer.MIN_VALUE;
                }
                complete = loadFor(topology);
                if (!complete && !closing) {
                    log.infof("Offline session preload on %s: the cluster topology changed while loading; planning again",
                            store.nodeName());
                }
            }
            metrics.passCompleted((System.nanoTime() - start) / 1_000_000);
            if (metrics.state() != PreloadState.FAILED) {
                metrics.state(closing ? PreloadState.IDLE : PreloadState.DONE);
            }
        } catch (RuntimeException | Error e) {
            // A failed preload must never take the node down: requests keep loading sessions lazily.
            metrics.state(PreloadState.FAILED);
            log.errorf(e, "Offline session preload on %s failed; sessions are loaded lazily until the next topology change",
                    store.nodeName());
        }
        return topology == null ? store.topology().id() : topology.id();
    }

    /** @return false if the topology moved (plan again), true if this topology's pass is over, whatever its outcome */
    private boolean loadFor(TopologySnapshot topology) throws InterruptedException {
        LoadPlan plan = plan(topology);
        metrics.planned(plan.toLoad().size());
        metrics.state(PreloadState.LOADING);

        ProgressLog progress = new ProgressLog(store.nodeName());
        progress.started(plan, "mode " + store.sessionMode() + ", settings " + config.describe());
        LoadStats stats = new LoadStats(metrics.lifetime());
        RevocationRecheck recheck = new RevocationRecheck(store, store, config.revocationRecheck(), System::nanoTime, stats);
        long clientLimit = Math.max(0, config.fillLimit(store.clientSessionsMaxCount()) - store.localClientSessions());
        LoadRun run = new LoadRun(store, config.batchSize(), config.workers(), config.databaseRetry(),
                new Backoff(Duration.ofMillis(500), Duration.ofSeconds(30)), recheck, progress,
                () -> closing || store.topology().id() != topology.id());

        var ticking = ticker.scheduleAtFixedRate(() -> progress.progress(stats, plan.toLoad().size()), 1, 1, TimeUnit.SECONDS);
        LoadRun.Outcome outcome;
        try {
            outcome = run.run(plan.toLoad(), clientLimit, stats);
        } finally {
            ticking.cancel(false);
        }
        finishInBackground(recheck);
        boolean topologyMoved = outcome == LoadRun.Outcome.STOPPED && !closing;
        switch (outcome) {
            case COMPLETE -> progress.finished(stats, "finished");
            case CAPACITY -> progress.finished(stats, "stopped at this node's capacity");
            case STOPPED -> progress.finished(stats, closing ? "stopped by shutdown" : "stopped by a topology change");
            case DATABASE_UNAVAILABLE -> {
                progress.finished(stats, "gave up");
                metrics.state(PreloadState.FAILED);
                log.errorf("Offline session preload on %s gave up: the database kept failing for %d s (%s). The sessions "
                        + "not loaded are loaded lazily; preloading tries again at the next topology change.",
                        store.nodeName(), config.databaseRetry().toSeconds(), run.databaseError());
            }
        }
        return !topologyMoved;
    }

    /** Streams the candidates and plans; a database error is retried with backoff for database-retry-seconds. */
    private LoadPlan plan(TopologySnapshot topology) throws InterruptedException {
        long limit = config.fillLimit(store.sessionsMaxCount());
        long deadline = System.nanoTime() + config.databaseRetry().toNanos();
        Backoff backoff = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(30));
        for (int attempt = 1; ; attempt++) {
            try {
                return new LoadPlanner(topology.owns(), store::isCached, limit).plan(store::forEachCandidate);
            } catch (RuntimeException e) {
                if (closing || System.nanoTime() > deadline) {
                    throw e;
                }
                log.warnf("Offline session preload on %s: reading the session ids failed (attempt %d), retrying in %d ms: %s",
                        store.nodeName(), attempt, backoff.after(attempt).toMillis(), e);
                Thread.sleep(backoff.after(attempt).toMillis());
            }
        }
    }

    private void finishInBackground(RevocationRecheck recheck) {
        if (closing) {
            recheck.evictAll();
            return;
        }
        pendingRechecks.add(recheck);
        rechecks.execute(() -> {
            try {
                recheck.finish();
            } finally {
                pendingRechecks.remove(recheck);
            }
        });
    }

    @Override
    public void close() {
        closing = true;
        passes.shutdownNow();
        ticker.shutdownNow();
        rechecks.shutdownNow();
        pendingRechecks.forEach(RevocationRecheck::evictAll);
        try {
            if (!passes.awaitTermination(30, TimeUnit.SECONDS)) {
                log.warn("Offline session preload did not stop within 30 s of shutdown");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
