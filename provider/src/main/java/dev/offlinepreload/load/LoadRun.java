package dev.offlinepreload.load;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import dev.offlinepreload.load.BatchResult.SkippedRow;
import dev.offlinepreload.plan.Batch;
import org.jboss.logging.Logger;

/**
 * Loads a plan's batches with a fixed number of workers. Workers take batches in plan order from a shared counter, so
 * all stay busy. A failed batch is retried ({@link Retry}); when it still fails it is reported and the run goes on,
 * unless no batch at all succeeded while it was failing: that is a database outage, and the run gives up
 * ({@link Outcome#DATABASE_UNAVAILABLE}) rather than burn through every remaining batch. The run also stops when
 * {@code stop} says so (topology changed, node shutting down) or when the client-session cache would go over its
 * limit. With a rate limit, workers wait before each batch until it fits under the cap; the governor decides how
 * many workers run at all, and how long the last one rests, while live requests need the node.
 */
public final class LoadRun {

    private static final Logger log = Logger.getLogger(LoadRun.class);
    private static final AtomicInteger RUNS = new AtomicInteger();

    private final SessionStore store;
    private final int workers;
    private final Retry retry;
    private final RateLimit rate;
    private final LoadGovernor governor;
    private final RevocationGuard guard;
    private final SkipLog skipLog;
    private final BooleanSupplier stop;

    private final AtomicLong lastSuccessNanos = new AtomicLong(System.nanoTime());
    private volatile String databaseDown;

    public LoadRun(SessionStore store, int workers, Retry retry, RateLimit rate, LoadGovernor governor,
                   RevocationGuard guard, SkipLog skipLog, BooleanSupplier stop) {
        this.store = store;
        this.workers = workers;
        this.retry = retry;
        this.rate = rate;
        this.governor = governor;
        this.guard = guard;
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
     * @param batches            the plan's batches
     * @param clientSessionLimit most client sessions to add to this node's cache in this run
     * @param stats              receives every outcome as it happens
     * @return how the run ended
     */
    public Outcome run(List<Batch> batches, long clientSessionLimit, LoadStats stats) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger capacityReached = new AtomicInteger();
        int threads = Math.max(1, Math.min(workers, batches.size()));
        int run = RUNS.incrementAndGet();
        AtomicInteger threadNo = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "offline-preload-" + run + "-worker-" + threadNo.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> futures = new ArrayList<>();
            // A worker the governor holds back ends too once nothing is left for it.
            BooleanSupplier over = () -> stopped() || next.get() >= batches.size() || capacityReached.get() == 1;
            BooleanSupplier hotNext = () -> {
                int index = next.get();
                return index < batches.size() && batches.get(index).hot();
            };
            for (int w = 0; w < threads; w++) {
                int worker = w + 1;
                futures.add(pool.submit(() -> {
                    while (governor.awaitTurn(worker, hotNext, over)) {
                        if (stats.clientSessions() >= clientSessionLimit) {
                            capacityReached.set(1);
                            return null;
                        }
                        int index = next.getAndIncrement();
                        if (index >= batches.size()) {
                            return null;
                        }
                        Batch batch = batches.get(index);
                        rate.acquire(batch.size());
                        long started = System.nanoTime();
                        BatchResult result = attempt(batch, stats);
                        if (!batch.hot()) {
                            governor.rest(System.nanoTime() - started, this::stopped);
                        }
                        if (result != null) {
                            stats.add(result);
                            result.skipped().forEach(skipLog::skipped);
                            guard.offer(batch, result.imported(), stats);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get();
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("A preload worker failed", e.getCause());
        } finally {
            // Until every worker has ended, so nothing of this run writes into the caches after it returns: each
            // statement is bounded by database-timeout-seconds, and retries end on stop or interrupt.
            pool.shutdownNow();
            while (!pool.awaitTermination(1, TimeUnit.SECONDS)) {
                log.debugf("Offline session preload: waiting for run %d's workers to end", run);
            }
        }
        if (databaseDown != null) {
            return Outcome.DATABASE_UNAVAILABLE;
        }
        if (capacityReached.get() == 1) {
            return Outcome.CAPACITY;
        }
        return next.get() >= batches.size() && !stop.getAsBoolean() ? Outcome.COMPLETE : Outcome.STOPPED;
    }

    /** The last database error, when the run gave up because of an outage. */
    public String databaseError() {
        return databaseDown;
    }

    private boolean stopped() {
        return databaseDown != null || stop.getAsBoolean() || Thread.currentThread().isInterrupted();
    }

    /** One batch with retries; null if it failed for good (then counted as failed). */
    private BatchResult attempt(Batch batch, LoadStats stats) throws InterruptedException {
        String what = "a batch of " + batch.size() + " sessions (first id " + batch.first() + ")";
        try {
            BatchResult result = retry.call(what, () -> store.importBatch(batch));
            lastSuccessNanos.set(System.nanoTime());
            return result;
        } catch (Retry.GaveUp e) {
            stats.addFailed(batch.size());
            if (lastSuccessNanos.get() < e.firstFailureNanos()) {
                databaseDown = e.getMessage();
            } else {
                log.errorf("Offline session preload: %s still failed after %d attempts, giving up on it; they will be "
                        + "loaded lazily. Last error: %s", what, e.attempts(), e.getMessage());
            }
            return null;
        }
    }
}
