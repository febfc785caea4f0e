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
                    loadedFor = pass();
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
    private int pass() throws InterruptedException {
        long start = System.nanoTime();
        TopologySnapshot topology = null;
        try {
            metrics.state(PreloadState.WAITING_FOR_NODES);
            boolean complete = false;
            while (!closing && !complete) {
                topology = new ClusterGate(store::topology, () -> closing).awaitSettled();
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
            metrics.state(closing ? PreloadState.IDLE : PreloadState.DONE);
        } catch (RuntimeException | Error e) {
            // A failed preload must never take the node down: requests keep loading sessions lazily.
            metrics.state(PreloadState.FAILED);
            log.errorf(e, "Offline session preload on %s failed; sessions are loaded lazily until the next topology change",
                    store.nodeName());
        }
        return topology == null ? store.topology().id() : topology.id();
    }

    /** @return true if the plan for this topology was worked through (or stopped at capacity) */
    private boolean loadFor(TopologySnapshot topology) throws InterruptedException {
        long limit = config.fillLimit(store.sessionsMaxCount());
        LoadPlan plan = new LoadPlanner(topology.owns(), store::isCached, limit).plan(store::forEachCandidate);
        metrics.planned(plan.toLoad().size());
        metrics.state(PreloadState.LOADING);

        ProgressLog progress = new ProgressLog(store.nodeName());
        progress.started(plan, "mode " + store.sessionMode() + ", settings " + config.describe());
        LoadStats stats = new LoadStats(metrics.lifetime());
        RevocationRecheck recheck = new RevocationRecheck(store, store, config.revocationRecheck(), System::nanoTime, stats);
        long clientLimit = Math.max(0, config.fillLimit(store.clientSessionsMaxCount()) - store.localClientSessions());
        LoadRun run = new LoadRun(store, config.batchSize(), config.workers(), config.batchMaxAttempts(),
                new Backoff(Duration.ofMillis(500), Duration.ofSeconds(30)), recheck, progress,
                () -> closing || store.topology().id() != topology.id());

        var ticking = ticker.scheduleAtFixedRate(() -> progress.progress(stats, plan.toLoad().size()), 1, 1, TimeUnit.SECONDS);
        boolean complete;
        try {
            complete = run.run(plan.toLoad(), clientLimit, stats);
        } finally {
            ticking.cancel(false);
        }
        if (closing) {
            recheck.evictAll();
        } else {
            recheck.finish();
        }
        boolean topologyMoved = store.topology().id() != topology.id();
        progress.finished(stats, complete ? "finished" : closing ? "stopped by shutdown"
                : topologyMoved ? "stopped by a topology change" : "stopped at this node's capacity");
        // Stopped at capacity counts as complete; stopped by a topology change means plan again.
        return complete || (!closing && !topologyMoved);
    }

    @Override
    public void close() {
        closing = true;
        passes.shutdownNow();
        ticker.shutdownNow();
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
