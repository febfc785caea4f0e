package dev.offlinepreload.keycloak;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.infinispan.notifications.Listener;
import org.infinispan.notifications.cachelistener.annotation.CacheEntriesEvicted;
import org.infinispan.notifications.cachelistener.annotation.CacheEntryRemoved;
import org.infinispan.notifications.cachelistener.event.CacheEntriesEvictedEvent;
import org.infinispan.notifications.cachelistener.event.CacheEntryRemovedEvent;
import org.keycloak.cluster.infinispan.InfinispanClusterProviderFactory;
import org.keycloak.models.sessions.infinispan.entities.EmbeddedClientSessionKey;

/**
 * The provider's own knowledge of removals, the immediate half of the revocation guard. A logout or revocation in
 * Keycloak 26.7 removes the session from the cache before its database delete commits: with persistent sessions the
 * cache removal runs in the transaction's prepare step, after the row is locked and before the commit; where Keycloak
 * cannot write in its main transaction (MariaDB, MySQL) the delete runs after the cache removal, in a transaction of
 * its own, retried for up to 10 s. With one owner per key that removal runs on this node, the node loading the session.
 * <p>
 * A batch that reads the row in that gap, before the delete commits, would put the session back. So a batch's
 * {@link #mark()} is back-dated by {@code lookBack}: every removal from the offline caches during the last
 * {@code lookBack} before the batch began reading, and every one after, counts against what the batch put, and the
 * batch takes such sessions out again. Every removal is therefore remembered for {@code lookBack}, whether a batch is
 * open or not (a removal just before a pass starts matters as much), and longer while an open mark still needs it. A
 * delete that commits more than {@code lookBack} after its cache removal, or that bypasses the cache (a user or client
 * deleted, the expiration task), is caught by the delayed existence check of the rows.
 * <p>
 * Not a removal in this sense: Keycloak's local clear of every session cache after a partition merge, which runs on
 * its cluster provider's executor ({@link #MERGE_CLEAR_THREADS}) and deletes no row. Counted as logouts, those removals
 * kept the first pass after a merge from loading anything the clear had taken, and hid from the check after the
 * pass whatever the clear took from under it.
 * <p>
 * Memory: one remembered removal per offline-cache removal of the last {@code lookBack} (a few hundred bytes each).
 */
@Listener(observation = Listener.Observation.POST)
public final class RemovalWatch {

    /** How far back a batch's mark reaches: six times Keycloak's own 10 s retry budget for a session write. */
    static final Duration LOOK_BACK = Duration.ofSeconds(60);

    /**
     * The name prefix of the threads of {@code InfinispanClusterProviderFactory}'s executor, on which Keycloak clears the
     * session caches locally after a partition merge (its {@code @Merged} listener).
     */
    static final String MERGE_CLEAR_THREADS = InfinispanClusterProviderFactory.class.getName() + "-";

    /** @param evicted whether the cache evicted the entry (its bound reached) rather than somebody removing it */
    private record Removal(long sequence, long nanos, Object key, String userSessionId, boolean evicted) {
    }

    /** Set while this provider removes entries itself (see {@link #asOwnRemoval}); the listener runs on the same thread. */
    private static final ThreadLocal<Boolean> OWN_REMOVAL = ThreadLocal.withInitial(() -> false);

    private final long lookBackNanos;
    private final LongSupplier nanoClock;
    private final AtomicLong sequence = new AtomicLong();
    /** The sequence number of the latest remembered removal, written after the removal is remembered. */
    private final AtomicLong lastRemoval = new AtomicLong();
    /** Open marks with how many batches hold each (two batches may get the same back-dated mark). Guarded by this. */
    private final TreeMap<Long, Integer> open = new TreeMap<>();
    /** Removals in the order of their sequence numbers, oldest first, until nobody needs them. Guarded by this. */
    private final ArrayDeque<Removal> history = new ArrayDeque<>();
    /** The removals of the last look-back, oldest first: where a new mark begins. Guarded by this. */
    private final ArrayDeque<Removal> recent = new ArrayDeque<>();
    private final ConcurrentHashMap<Object, Removal> removed = new ConcurrentHashMap<>();
    /** The same removals by user session id: a client session's removal counts for its user session. */
    private final ConcurrentHashMap<String, Removal> removedFromSession = new ConcurrentHashMap<>();

    RemovalWatch() {
        this(LOOK_BACK, System::nanoTime);
    }

    RemovalWatch(Duration lookBack, LongSupplier nanoClock) {
        this.lookBackNanos = lookBack.toNanos();
        this.nanoClock = nanoClock;
    }

    /**
     * Opens a batch: its mark lies just before the oldest removal of the last {@code lookBack}, so those removals and
     * every later one count for it until {@link #release(long)}. Marks are taken and released under one lock.
     */
    synchronized long mark() {
        forgetOld();
        long mark = recent.isEmpty() ? sequence.get() : recent.peekFirst().sequence() - 1;
        open.merge(mark, 1, Integer::sum);
        return mark;
    }

    /**
     * Whether anything was removed after the mark: when not, a batch needs no look per key (those lookups were 3% of
     * the loader threads' CPU in a 1M profile, with no removal at all). A removal that a batch's put was ordered after
     * has been remembered, and counted here, before that put completed.
     */
    boolean anyRemovedSince(long mark) {
        return lastRemoval.get() > mark;
    }

    /** Whether the entry with this key was removed after the mark. */
    boolean removedSince(Object key, long mark) {
        Removal r = removed.get(key);
        return r != null && r.sequence() > mark;
    }

    /** When ({@link System#nanoTime()}) the entry with this key was last removed, as far as it is remembered; for the log. */
    long removedAtNanos(Object key) {
        Removal r = removed.get(key);
        return r == null ? 0 : r.nanos();
    }

    /** Whether the last remembered removal of this key was an eviction. */
    boolean evicted(Object key) {
        Removal r = removed.get(key);
        return r != null && r.evicted();
    }

    /** Whether the user session or one of its client sessions was removed after the mark (evictions do not count). */
    boolean sessionTouchedSince(String userSessionId, long mark) {
        Removal r = removedFromSession.get(userSessionId);
        return r != null && r.sequence() > mark;
    }

    /** Closes a batch and forgets the removals nobody needs any more. */
    synchronized void release(long mark) {
        open.computeIfPresent(mark, (m, n) -> n == 1 ? null : n - 1);
        forgetOld();
    }

    int remembered() {
        return removed.size();
    }

    /**
     * Runs the provider's own removals (a failed batch's eviction before its retry, a revoked session taken out, the
     * delayed check's removals): no batch must take them for a logout (the retry of a failed batch would take out
     * everything it put again), but they are no loss either, so the check after a pass still counts them as removed.
     */
    static void asOwnRemoval(Runnable removal) {
        OWN_REMOVAL.set(true);
        try {
            removal.run();
        } finally {
            OWN_REMOVAL.set(false);
        }
    }

    @CacheEntryRemoved
    public void onRemoved(CacheEntryRemovedEvent<Object, Object> event) {
        if (event.isPre() || Thread.currentThread().getName().startsWith(MERGE_CLEAR_THREADS)) {
            return;
        }
        Object key = event.getKey();
        String userSessionId = key instanceof EmbeddedClientSessionKey client ? client.userSessionId() : String.valueOf(key);
        synchronized (this) {
            long at = sequence.incrementAndGet();
            Removal removal = new Removal(at, nanoClock.getAsLong(), key, userSessionId, false);
            history.addLast(removal);
            removedFromSession.put(userSessionId, removal);
            if (!OWN_REMOVAL.get()) {
                recent.addLast(removal);
                removed.put(key, removal);
                lastRemoval.set(at);
            }
            forgetOld();
        }
    }

    /**
     * An entry evicted while a batch read would be refilled by the batch's put-if-absent with the row as the batch
     * read it, older than what the evicted entry held (a refresh in between: its timestamps, or with refresh token
     * rotation the current token and its use count). So an eviction counts against the batches open at that moment,
     * as a removal does, but without the look-back (a batch that begins reading after the eviction reads the current
     * row), and not for the check after the pass: an entry the cache evicted is missing, not removed.
     */
    @CacheEntriesEvicted
    public void onEvicted(CacheEntriesEvictedEvent<Object, Object> event) {
        if (event.isPre() || OWN_REMOVAL.get() || Thread.currentThread().getName().startsWith(MERGE_CLEAR_THREADS)) {
            return;
        }
        synchronized (this) {
            for (Object key : event.getEntries().keySet()) {
                String userSessionId = key instanceof EmbeddedClientSessionKey client ? client.userSessionId() : String.valueOf(key);
                long at = sequence.incrementAndGet();
                Removal eviction = new Removal(at, nanoClock.getAsLong(), key, userSessionId, true);
                history.addLast(eviction);
                removed.put(key, eviction);
                lastRemoval.set(at);
            }
            forgetOld();
        }
    }

    /** Forgets removals older than the look-back that no open mark precedes. Called under this lock. */
    private void forgetOld() {
        long oldest = nanoClock.getAsLong() - lookBackNanos;
        while (!recent.isEmpty() && recent.peekFirst().nanos() - oldest < 0) {
            recent.pollFirst();
        }
        long floor = open.isEmpty() ? Long.MAX_VALUE : open.firstKey();
        for (Removal r = history.peekFirst(); r != null && r.nanos() - oldest < 0 && r.sequence() <= floor; r = history.peekFirst()) {
            history.pollFirst();
            removed.remove(r.key(), r);
            removedFromSession.remove(r.userSessionId(), r);
        }
    }
}
