package dev.offlinepreload.load;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import dev.offlinepreload.load.BatchResult.SkippedRow;
import dev.offlinepreload.plan.Candidate;
import org.jboss.logging.Logger;

/**
 * Loads a plan with a fixed number of workers. Batches are taken in plan order (most recent first) from a shared
 * counter, so all workers stay busy and the most valuable sessions land first. A failed batch is retried with backoff
 * for up to {@code retryFor}. Then it is reported and the run goes on, unless no batch at all succeeded while it was
 * failing: that is a database outage, and the run gives up ({@link Outcome#DATABASE_UNAVAILABLE}) rather than burn
 * through every remaining batch. The run also stops when {@code stop} says so (topology changed, node shutting down)
 * or when the client-session cache would go over its limit.
 */
public final class LoadRun {

    private static final Logger log = Logger.getLogger(LoadRun.class);
    private static final AtomicInteger RUNS = new AtomicInteger();

    private final SessionStore store;
    private final int batchSize;
    private final int workers;
    private final long retryForNanos;
    private final Backoff backoff;
    private final RevocationRecheck recheck;
    private final SkipLog skipLog;
    private final BooleanSupplier stop;

    private final java.util.concurrent.atomic.AtomicLong lastSuccessNanos = new java.util.concurrent.atomic.AtomicLong(System.nanoTime());
    private volatile String databaseDown;

    public LoadRun(SessionStore store, int batchSize, int workers, java.time.Duration retryFor, Backoff backoff,
                   RevocationRecheck recheck, SkipLog skipLog, BooleanSupplier stop) {
        this.store = store;
        this.batchSize = batchSize;
        this.workers = workers;
        this.retryForNanos = retryFor.toNanos();
        this.backoff = backoff;
        this.recheck = recheck;
        this.skipLog = skipLog;
        this.stop = stop;
    }

    /** How a run ended. */
    public enum Outcome {
        /** Every batch of the plan was worked through (some may have failed and been reported). */
        COMPLETE,
        /** The client-session cache reached its limit. */
        CAPACITY,
        /** {@code stop} said so: topology changed or shutdown. */
        STOPPED,
        /** The database failed for longer than the retry time with no batch succeeding meanwhile. */
        DATABASE_UNAVAILABLE
    }

    /** Logs skipped rows by id, at a bounded rate. */
    public interface SkipLog {
        void skipped(SkippedRow row);
    }

    /**
     * @param plan               sessions to load, most recent first
     * @param clientSessionLimit most client sessions to add to this node's cache in this run
     * @param stats              receives every outcome as it happens
     * @return how the run ended
     */
    public Outcome run(List<Candidate> plan, long clientSessionLimit, LoadStats stats) throws InterruptedException {
        int batches = (plan.size() + batchSize - 1) / batchSize;
        AtomicInteger next = new AtomicInteger();
        int threads = Math.max(1, Math.min(workers, batches));
        int run = RUNS.incrementAndGet();
        AtomicInteger threadNo = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, "offline-preload-" + run + "-worker-" + threadNo.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        ExecutorService pool = Executors.newFixedThreadPool(threads, factory);
        boolean[] capacityReached = {false};
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < threads; w++) {
                futures.add(pool.submit(() -> {
                    while (!stopped()) {
                        if (stats.clientSessions() >= clientSessionLimit) {
                            capacityReached[0] = true;
                            return null;
                        }
                        int batch = next.getAndIncrement();
                        if (batch >= batches) {
                            return null;
                        }
                        List<String> ids = ids(plan, batch);
                        BatchResult result = attempt(ids, stats);
                        if (result != null) {
                            stats.add(result);
                            result.skipped().forEach(skipLog::skipped);
                            recheck.offer(result.imported());
                        }
                        recheck.runDue();
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get();
            }
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("A preload worker failed", e.getCause());
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(30, TimeUnit.SECONDS);
        }
        if (databaseDown != null) {
            return Outcome.DATABASE_UNAVAILABLE;
        }
        if (capacityReached[0]) {
            return Outcome.CAPACITY;
        }
        return next.get() >= batches && !stop.getAsBoolean() ? Outcome.COMPLETE : Outcome.STOPPED;
    }

    /** The last database error, when the run gave up because of an outage. */
    public String databaseError() {
        return databaseDown;
    }

    private boolean stopped() {
        return databaseDown != null || stop.getAsBoolean() || Thread.currentThread().isInterrupted();
    }

    private List<String> ids(List<Candidate> plan, int batch) {
        int from = batch * batchSize;
        int to = Math.min(plan.size(), from + batchSize);
        List<String> ids = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            ids.add(plan.get(i).id());
        }
        return ids;
    }

    /** One batch with retries; null if it failed for good (then counted as failed). */
    private BatchResult attempt(List<String> ids, LoadStats stats) throws InterruptedException {
        long firstFailure = 0;
        for (int attempt = 1; ; attempt++) {
            try {
                BatchResult result = store.importBatch(ids);
                lastSuccessNanos.set(System.nanoTime());
                return result;
            } catch (RuntimeException e) {
                long now = System.nanoTime();
                firstFailure = attempt == 1 ? now : firstFailure;
                long left = retryForNanos - (now - firstFailure);
                if (left <= 0 || stopped()) {
                    stats.addFailed(ids.size());
                    if (lastSuccessNanos.get() < firstFailure) {
                        databaseDown = rootMessage(e);
                    } else {
                        log.errorf("Offline session preload: a batch of %d sessions (first id %s) still failed after "
                                + "%d attempts in %d s, giving up on it; they will be loaded lazily. Last error: %s",
                                ids.size(), ids.get(0), attempt, (now - firstFailure) / 1_000_000_000L, rootMessage(e));
                    }
                    log.debug("Batch failure", e);
                    return null;
                }
                long pause = Math.min(backoff.after(attempt).toNanos(), left);
                log.warnf("Offline session preload: a batch of %d sessions failed (attempt %d), retrying in %d ms: %s",
                        ids.size(), attempt, pause / 1_000_000, rootMessage(e));
                Thread.sleep(Math.max(1, pause / 1_000_000));
            }
        }
    }

    static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == e ? e.toString() : e + " (caused by " + root + ")";
    }
}
