package dev.offlinepreload.keycloak;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;

import org.infinispan.notifications.Listener;
import org.infinispan.notifications.cachelistener.annotation.CacheEntryRemoved;
import org.infinispan.notifications.cachelistener.event.CacheEntryRemovedEvent;
import org.keycloak.models.sessions.infinispan.entities.EmbeddedClientSessionKey;

/**
 * The provider's own knowledge of removals, the cheap half of the revocation guard. A logout or revocation in
 * Keycloak 26.7 loads the session (it is then in the cache: its own import, or ours) and removes it from the cache
 * before its database delete commits; with one owner per key that removal runs on this node, the node loading the
 * session. A batch takes a {@link #mark()} before it reads its rows; every removal from the offline caches after that
 * mark is remembered until the batch is done, and the batch takes out again every session it put whose key was
 * removed after its mark: a row read just before a logout never outlives the logout in the cache. Deletes that
 * bypass the cache (a user or client deleted, the expiration task) are caught by the existence checks of the rows.
 * <p>
 * Removals are only remembered while a batch (or a pass's {@code RemovalWindow}) is open, and forgotten once no open
 * one is older.
 */
@Listener(observation = Listener.Observation.POST)
public final class RemovalWatch {

    private final AtomicLong sequence = new AtomicLong();
    /** The sequence number of the latest remembered removal, written after the removal is remembered. */
    private final AtomicLong lastRemoval = new AtomicLong();
    private final ConcurrentSkipListSet<Long> open = new ConcurrentSkipListSet<>();
    private final ConcurrentHashMap<Object, Long> removed = new ConcurrentHashMap<>();
    /** The same removals by user session id: a client session's removal counts for its user session. */
    private final ConcurrentHashMap<String, Long> removedFromSession = new ConcurrentHashMap<>();

    /**
     * Opens a batch: removals from now on are remembered until {@link #release(long)}. Marks are taken and released
     * under one lock, so a release never sees a mark half-taken: it computed the oldest open mark from
     * {@code isEmpty()} then {@code first()}, and a concurrent release in between threw NoSuchElementException after
     * the batch had put its sessions (the full benchmark's "loaded only 999000").
     */
    synchronized long mark() {
        long mark = sequence.incrementAndGet();
        open.add(mark);
        return mark;
    }

    /**
     * Whether anything was removed after the mark was taken: when not, a batch needs no look per key (those lookups
     * were 3% of the loader threads' CPU in a 1M profile, with no removal at all). A removal that a batch's put was
     * ordered after has been remembered, and counted here, before that put completed.
     */
    boolean anyRemovedSince(long mark) {
        return lastRemoval.get() > mark;
    }

    /** Whether the entry with this key was removed after the mark was taken. */
    boolean removedSince(Object key, long mark) {
        Long at = removed.get(key);
        return at != null && at > mark;
    }

    /** Whether the user session or one of its client sessions was removed after the mark was taken. */
    boolean sessionTouchedSince(String userSessionId, long mark) {
        Long at = removedFromSession.get(userSessionId);
        return at != null && at > mark;
    }

    /** Closes a batch and forgets the removals no open batch needs any more. */
    synchronized void release(long mark) {
        open.remove(mark);
        // Removals at or below every open mark cannot matter to any batch, open now or opened later.
        long floor = open.isEmpty() ? sequence.get() + 1 : open.first();
        removed.values().removeIf(at -> at < floor);
        removedFromSession.values().removeIf(at -> at < floor);
    }

    int remembered() {
        return removed.size();
    }

    @CacheEntryRemoved
    public void onRemoved(CacheEntryRemovedEvent<Object, Object> event) {
        if (!event.isPre() && !open.isEmpty()) {
            long at = sequence.incrementAndGet();
            removed.put(event.getKey(), at);
            Object key = event.getKey();
            removedFromSession.put(key instanceof EmbeddedClientSessionKey client ? client.userSessionId() : String.valueOf(key), at);
            lastRemoval.accumulateAndGet(at, Math::max);
        }
    }
}
