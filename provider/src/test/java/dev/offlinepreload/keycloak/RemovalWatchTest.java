package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.infinispan.Cache;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.context.Flag;
import org.infinispan.manager.DefaultCacheManager;
import org.keycloak.models.sessions.infinispan.entities.EmbeddedClientSessionKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The removals a batch must see, on a real (local) Infinispan cache with the watch registered as its listener. */
class RemovalWatchTest {

    private static final Duration LOOK_BACK = Duration.ofSeconds(60);

    private final DefaultCacheManager manager = new DefaultCacheManager();
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final RemovalWatch watch = new RemovalWatch(LOOK_BACK, clock::get);
    private final Cache<String, String> cache;

    private final Cache<EmbeddedClientSessionKey, String> clientCache;

    RemovalWatchTest() {
        manager.defineConfiguration("clientSessions", new ConfigurationBuilder().build());
        clientCache = manager.getCache("clientSessions");
        clientCache.addListener(watch);
        manager.defineConfiguration("sessions", new ConfigurationBuilder().build());
        cache = manager.getCache("sessions");
        cache.addListener(watch);
    }

    @AfterEach
    void stop() {
        manager.stop();
    }

    private void pass(Duration time) {
        clock.addAndGet(time.toNanos());
    }

    @Test
    void aRemovalAfterTheMarkIsSeenOneLongerAgoThanTheLookBackIsNot() {
        cache.put("long-ago", "x");
        cache.put("after", "x");
        long earlier = watch.mark();
        cache.remove("long-ago");
        pass(LOOK_BACK.plusSeconds(1));
        long mark = watch.mark();
        cache.remove("after");

        assertThat(watch.removedSince("after", mark)).isTrue();
        assertThat(watch.removedSince("long-ago", mark)).as("removed more than the look-back before this batch").isFalse();
        assertThat(watch.removedSince("long-ago", earlier)).as("but after the earlier batch's mark").isTrue();
        assertThat(watch.removedSince("never-removed", earlier)).isFalse();
        watch.release(earlier);
        watch.release(mark);
    }

    @Test
    void anEvictionWhileABatchReadsCountsForItButNotForTheCheckAfterThePassNorForLaterBatches() {
        manager.defineConfiguration("bounded", new ConfigurationBuilder().memory().maxCount(2).build());
        Cache<String, String> bounded = manager.getCache("bounded");
        bounded.addListener(watch);
        long reading = watch.mark();
        List<String> keys = List.of("a", "b", "c", "d");
        keys.forEach(k -> bounded.put(k, "x")); // over the bound: the cache evicts
        List<String> evicted = keys.stream().filter(k -> !bounded.containsKey(k)).toList();
        assertThat(evicted).as("evicted by the bound of 2").hasSize(2);

        for (String key : evicted) {
            assertThat(watch.removedSince(key, reading)).as("%s evicted while the batch read", key).isTrue();
            assertThat(watch.evicted(key)).isTrue();
            assertThat(watch.sessionTouchedSince(key, reading)).as("an evicted entry is missing, not removed").isFalse();
        }
        long later = watch.mark();
        for (String key : evicted) {
            assertThat(watch.removedSince(key, later)).as("a batch that reads after the eviction reads the current row")
                    .isFalse();
        }
        watch.release(reading);
        watch.release(later);
    }

    @Test
    void theProvidersOwnRemovalsAreNoEvictions() {
        cache.put("own", "x");
        long mark = watch.mark();
        RemovalWatch.asOwnRemoval(() -> cache.evict("own"));
        assertThat(watch.removedSince("own", mark)).isFalse();
        watch.release(mark);
    }

    @Test
    void aRemovalJustBeforeTheMarkIsSeen() {
        // The revocation race: a logout removes the session from the cache, its delete commits seconds later, and a
        // batch that begins reading in between still reads the row. The batch must take the session out again.
        cache.put("revoked", "x");
        cache.remove("revoked");
        pass(Duration.ofSeconds(4));
        long mark = watch.mark();
        assertThat(watch.removedSince("revoked", mark)).as("removed 4 s before the batch began reading").isTrue();
        assertThat(watch.sessionTouchedSince("revoked", mark)).isTrue();
        assertThat(watch.anyRemovedSince(mark)).isTrue();
        watch.release(mark);
    }

    @Test
    void anyRemovalSinceTheMarkIsSeenWithoutAKey() {
        cache.put("before", "x");
        clientCache.put(new EmbeddedClientSessionKey("session", "client"), "x");
        long earlier = watch.mark();
        cache.remove("before");
        pass(LOOK_BACK.plusSeconds(1));
        long mark = watch.mark();
        assertThat(watch.anyRemovedSince(mark)).as("nothing removed since this mark").isFalse();
        assertThat(watch.anyRemovedSince(earlier)).isTrue();

        clientCache.remove(new EmbeddedClientSessionKey("session", "client"));
        assertThat(watch.anyRemovedSince(mark)).as("a client session's removal counts").isTrue();
        watch.release(earlier);
        watch.release(mark);
    }

    @Test
    void removalsAreForgottenOnceOlderThanTheLookBackAndNoOpenBatchNeedsThem() {
        cache.put("a", "x");
        cache.put("b", "x");
        long first = watch.mark();
        cache.remove("a");
        pass(LOOK_BACK.plusSeconds(1));
        long second = watch.mark();
        cache.remove("b");
        assertThat(watch.remembered()).isEqualTo(2);

        watch.release(first);
        assertThat(watch.remembered()).as("'a' was removed before the open batch's mark, long ago").isEqualTo(1);
        assertThat(watch.removedSince("b", second)).isTrue();
        watch.release(second);
        assertThat(watch.remembered()).as("'b' was removed within the look-back").isEqualTo(1);
        pass(LOOK_BACK.plusSeconds(1));
        long later = watch.mark();
        assertThat(watch.remembered()).isZero();
        assertThat(watch.removedSince("b", later)).isFalse();
        watch.release(later);
    }

    @Test
    void aRemovalWhileNoBatchIsOpenIsRememberedForTheLookBack() {
        // A removal just before a pass begins matters as much as one during it.
        cache.put("a", "x");
        cache.remove("a");
        assertThat(watch.remembered()).isEqualTo(1);
        pass(LOOK_BACK.minusSeconds(1));
        long mark = watch.mark();
        assertThat(watch.removedSince("a", mark)).isTrue();
        watch.release(mark);
        pass(Duration.ofSeconds(2));
        mark = watch.mark();
        assertThat(watch.removedSince("a", mark)).isFalse();
        assertThat(watch.remembered()).isZero();
        watch.release(mark);
    }

    @Test
    void aRemovalOfAKeyNotInTheCacheCountsToo() {
        // A logout of a session that was not cached (yet) must still stop a batch that read it from putting it back.
        long mark = watch.mark();
        cache.remove("absent");
        assertThat(watch.removedSince("absent", mark)).isTrue();
        watch.release(mark);
    }

    @Test
    void aClientSessionsRemovalTouchesItsUserSessionButDoesNotRemoveIt() {
        clientCache.put(new EmbeddedClientSessionKey("s1", "app-1"), "x");
        long mark = watch.mark();
        clientCache.remove(new EmbeddedClientSessionKey("s1", "app-1"));

        assertThat(watch.sessionTouchedSince("s1", mark)).as("one of s1's client sessions was removed").isTrue();
        assertThat(watch.removedSince("s1", mark)).as("s1 itself was not").isFalse();
        assertThat(watch.sessionTouchedSince("s2", mark)).isFalse();
        watch.release(mark);
    }

    @Test
    void keycloaksClearAfterAPartitionMergeIsNoRevocation() throws Exception {
        // Keycloak clears every session cache locally on each node after a merge, on its cluster provider's executor;
        // no row is deleted. A logout on any other thread counts.
        cache.put("cleared", "x");
        clientCache.put(new EmbeddedClientSessionKey("cleared", "app"), "x");
        Thread clear = new Thread(() -> {
            cache.getAdvancedCache().withFlags(Flag.CACHE_MODE_LOCAL).clear();
            clientCache.clear();
        }, RemovalWatch.MERGE_CLEAR_THREADS + "pool-3-thread-1");
        clear.start();
        clear.join();
        assertThat(cache).isEmpty();
        cache.put("logged-out", "x");
        cache.remove("logged-out");

        long mark = watch.mark();
        assertThat(watch.sessionTouchedSince("cleared", mark)).as("cleared after a merge").isFalse();
        assertThat(watch.removedSince("logged-out", mark)).isTrue();
        watch.release(mark);
    }

    @Test
    void theProvidersOwnEvictionIsNoRevocationButNoLossEither() {
        // A failed batch evicts what it put and is retried at once: the retry must not take its sessions for revoked.
        cache.put("evicted", "x");
        long window = watch.mark();
        RemovalWatch.asOwnRemoval(() -> cache.remove("evicted"));
        long retry = watch.mark();
        assertThat(watch.removedSince("evicted", retry)).as("seen by the retry's batch").isFalse();
        assertThat(watch.anyRemovedSince(retry)).isFalse();
        assertThat(watch.sessionTouchedSince("evicted", window)).as("seen by the pass's check: no loss").isTrue();
        watch.release(retry);
        watch.release(window);
    }

    @Test
    void batchesOpeningAndClosingConcurrentlyNeverFail() throws Exception {
        // Two workers, as in a load; before marks and releases shared a lock, one release could find the open marks
        // emptied between isEmpty() and first() and throw NoSuchElementException after its batch had put sessions.
        ExecutorService workers = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int worker = w;
                done.add(workers.submit(() -> {
                    for (int i = 0; i < 20_000; i++) {
                        long mark = watch.mark();
                        cache.remove("w" + worker + "-" + i);
                        assertThat(watch.removedSince("w" + worker + "-" + i, mark)).isTrue();
                        watch.release(mark);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            workers.shutdownNow();
        }
        pass(LOOK_BACK.plusSeconds(1));
        watch.release(watch.mark());
        assertThat(watch.remembered()).isZero();
    }
}
