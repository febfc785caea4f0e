package dev.offlinepreload.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.offlinepreload.plan.Batch;
import org.jboss.logging.Logger;

/**
 * The delayed revocation check, with its queue, its threads and its shutdown eviction in one place. Each batch checks
 * itself right after importing (removals seen by the caches, during its read or shortly before); a delete that bypassed
 * the caches (a user or client deleted, the expiration task, a DBA), or one that committed later than that look-back,
 * is caught here, {@code delay} later, by one more existence check of the batch's key range. Whatever cannot be checked
 * (database down, node shutting down) is evicted instead: an evicted session is only loaded again lazily, and lazily
 * loading reads the database. There is no way to switch it off: it is the only net for deletes the caches never see.
 */
public final class RevocationGuard implements AutoCloseable {

    private static final Logger log = Logger.getLogger(RevocationGuard.class);

    private record Pending(Batch batch, List<ImportedSession> sessions, LoadStats stats) {
    }

    private final SessionStore store;
    private final Duration delay;
    private final Set<Pending> pending = ConcurrentHashMap.newKeySet();
    /** Two threads: a check is one index-only query per table, and one slow check must not hold back the others. */
    private final ScheduledExecutorService checks = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "offline-preload-revocation-check");
        t.setDaemon(true);
        return t;
    });

    public RevocationGuard(SessionStore store, Duration delay) {
        this.store = store;
        this.delay = delay;
    }

    /** Schedules the delayed check of a batch's imported sessions; removals are counted into {@code stats}. */
    public void offer(Batch batch, List<ImportedSession> imported, LoadStats stats) {
        if (imported.isEmpty()) {
            return;
        }
        Pending p = new Pending(batch, imported, stats);
        pending.add(p);
        try {
            checks.schedule(() -> check(p), delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            evict(p); // closed meanwhile
        }
    }

    /** Batches whose delayed check has not run yet. */
    public int pending() {
        return pending.size();
    }

    private void check(Pending p) {
        if (!pending.remove(p)) {
            return;
        }
        try {
            p.stats().addRevokedRemoved(store.removeDeleted(p.batch(), p.sessions()));
        } catch (RuntimeException e) {
            log.warnf("Could not re-check %d loaded offline sessions against the database (%s); evicting them from "
                    + "the cache so they are loaded again, lazily, from the database", p.sessions().size(), e.toString());
            store.evict(p.sessions());
        }
    }

    private void evict(Pending p) {
        if (pending.remove(p)) {
            store.evict(p.sessions());
        }
    }

    /** After {@link #close()}: waits for a check in flight (its statements are bounded by database-timeout-seconds). */
    public boolean awaitTermination(long millis) throws InterruptedException {
        return checks.awaitTermination(millis, TimeUnit.MILLISECONDS);
    }

    /** Stops checking and evicts every session still waiting for its check (node shutdown). */
    @Override
    public void close() {
        checks.shutdownNow();
        List<Pending> left = new ArrayList<>(pending);
        left.forEach(this::evict);
        if (!left.isEmpty()) {
            log.debugf("Evicted the sessions of %d batches whose revocation re-check could not wait", left.size());
        }
    }
}
