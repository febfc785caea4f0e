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
 * counter, so all workers stay busy and the most valuable sessions land first. A failed batch is retried with backoff;
 * after the last attempt it is reported and the run goes on. The run stops early when {@code stop} says so (topology
 * changed, node shutting down) or when the client-session cache would go over its limit.
 */
public final class LoadRun {

    private static final Logger log = Logger.getLogger(LoadRun.class);
    private static final AtomicInteger RUNS = new AtomicInteger();

    private final SessionStore store;
    private final int batchSize;
    private final int workers;
    private final int maxAttempts;
    private final Backoff backoff;
    private final RevocationRecheck recheck;
    private final SkipLog skipLog;
    private final BooleanSupplier stop;

    public LoadRun(SessionStore store, int batchSize, int workers, int maxAttempts, Backoff backoff,
                   RevocationRecheck recheck, SkipLog skipLog, BooleanSupplier stop) {
        this.store = store;
        this.batchSize = batchSize;
        this.workers = workers;
        this.maxAttempts = maxAttempts;
        this.backoff = backoff;
        this.recheck = recheck;
        this.skipLog = skipLog;
        this.stop = stop;
    }

    /** Logs skipped rows by id, at a bounded rate. */
    public interface SkipLog {
        void skipped(SkippedRow row);
    }

    /**
     * @param plan               sessions to load, most recent first
     * @param clientSessionLimit most client sessions to add to this node's cache in this run
     * @param stats              receives every outcome as it happens
     * @return true if the whole plan was worked through; false if it stopped early (stop signal or capacity)
     */
    public boolean run(List<Candidate> plan, long clientSessionLimit, LoadStats stats) throws InterruptedException {
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
                    while (!stop.getAsBoolean() && !Thread.currentThread().isInterrupted()) {
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
        return !capacityReached[0] && !stop.getAsBoolean() && next.get() >= batches;
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
        for (int attempt = 1; ; attempt++) {
            try {
                return store.importBatch(ids);
            } catch (RuntimeException e) {
                if (attempt >= maxAttempts || stop.getAsBoolean()) {
                    log.errorf("Offline session preload: a batch of %d sessions (first id %s) failed %d times, "
                            + "giving up on it; they will be loaded lazily. Last error: %s", ids.size(), ids.get(0),
                            attempt, rootMessage(e));
                    log.debug("Batch failure", e);
                    stats.addFailed(ids.size());
                    return null;
                }
                log.warnf("Offline session preload: a batch of %d sessions failed (attempt %d of %d), retrying in "
                        + "%d ms: %s", ids.size(), attempt, maxAttempts, backoff.after(attempt).toMillis(), rootMessage(e));
                backoff.pause(attempt);
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
