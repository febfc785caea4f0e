package dev.offlinepreload.load;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.LongSupplier;

import org.jboss.logging.Logger;

/**
 * The second revocation check. Keycloak removes a logged-out session from the cache before its database delete
 * commits; a batch read just before that logout could put the session back after the removal. The check inside each
 * batch waits for deletes that already hold a row lock; this one, {@code delay} later, catches a delete that had not
 * yet taken its lock (Keycloak retries session writes for up to 10 s). Whatever cannot be checked is evicted: an
 * evicted session is only loaded again lazily, and lazily loading reads the database.
 */
public final class RevocationRecheck {

    private static final Logger log = Logger.getLogger(RevocationRecheck.class);

    private record Due(long atNanos, List<ImportedSession> sessions) {
    }

    private final SessionStore store;
    private final Evictor evictor;
    private final long delayNanos;
    private final LongSupplier nanoTime;
    private final LoadStats stats;
    private final Deque<Due> queue = new ArrayDeque<>();

    /** Removes sessions from this node's caches without asking the database (the fail-safe). */
    public interface Evictor {
        void evict(List<ImportedSession> sessions);
    }

    public RevocationRecheck(SessionStore store, Evictor evictor, Duration delay, LongSupplier nanoTime, LoadStats stats) {
        this.store = store;
        this.evictor = evictor;
        this.delayNanos = delay.toNanos();
        this.nanoTime = nanoTime;
        this.stats = stats;
    }

    public boolean enabled() {
        return delayNanos > 0;
    }

    public void offer(List<ImportedSession> imported) {
        if (!enabled() || imported.isEmpty()) {
            return;
        }
        synchronized (queue) {
            queue.addLast(new Due(nanoTime.getAsLong() + delayNanos, imported));
        }
    }

    /** Checks every batch whose delay has passed. Called by the workers between batches. */
    public void runDue() {
        List<ImportedSession> due = new ArrayList<>();
        long now = nanoTime.getAsLong();
        synchronized (queue) {
            while (!queue.isEmpty() && queue.peekFirst().atNanos() <= now) {
                due.addAll(queue.pollFirst().sessions());
            }
        }
        check(due);
    }

    /** Waits until the last batch is due and checks everything left; on interrupt, evicts what is left instead. */
    public void finish() {
        while (true) {
            long wait;
            synchronized (queue) {
                if (queue.isEmpty()) {
                    return;
                }
                wait = queue.peekLast().atNanos() - nanoTime.getAsLong();
            }
            if (wait > 0) {
                try {
                    Thread.sleep(Math.max(1, wait / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    evictAll();
                    return;
                }
            }
            runDue();
        }
    }

    /** Evicts every session still waiting for its check: used when the pass is abandoned (shutdown, topology change). */
    public void evictAll() {
        List<ImportedSession> left = new ArrayList<>();
        synchronized (queue) {
            queue.forEach(d -> left.addAll(d.sessions()));
            queue.clear();
        }
        if (!left.isEmpty()) {
            evictor.evict(left);
            log.debugf("Evicted %d sessions whose revocation re-check could not wait", left.size());
        }
    }

    private void check(List<ImportedSession> due) {
        if (due.isEmpty()) {
            return;
        }
        try {
            stats.addRevokedRemoved(store.removeDeleted(due));
        } catch (RuntimeException e) {
            log.warnf("Could not re-check %d loaded offline sessions against the database (%s); evicting them from "
                    + "the cache so they are loaded again, lazily, from the database", due.size(), e.toString());
            evictor.evict(due);
        }
    }
}
