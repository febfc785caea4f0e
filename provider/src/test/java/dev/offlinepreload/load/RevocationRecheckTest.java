package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class RevocationRecheckTest {

    private final FakeStore store = new FakeStore();
    private final AtomicLong clock = new AtomicLong();
    private final LoadStats stats = new LoadStats(null);
    private final RevocationRecheck recheck = new RevocationRecheck(store, store, Duration.ofSeconds(30), clock::get, stats);

    private void imported(String... ids) {
        for (String id : ids) {
            store.database.add(id);
            store.cache.add(id);
        }
        recheck.offer(List.of(ids).stream().map(id -> new ImportedSession(id, List.of())).toList());
    }

    @Test
    void removesSessionsDeletedAfterImportOnceTheDelayHasPassed() {
        imported("a", "b");
        store.database.remove("a"); // logged out while it was being loaded

        recheck.runDue();
        assertThat(store.cache).as("not due yet").contains("a");

        clock.addAndGet(Duration.ofSeconds(30).toNanos());
        recheck.runDue();
        assertThat(store.cache).containsExactly("b");
        assertThat(stats.revokedRemoved()).isEqualTo(1);
    }

    @Test
    void evictsWhatItCannotCheck() {
        imported("a", "b");
        store.databaseDown = true;
        clock.addAndGet(Duration.ofSeconds(31).toNanos());
        recheck.runDue();
        assertThat(store.cache).as("unverifiable sessions are dropped, to be loaded lazily").isEmpty();
    }

    @Test
    void evictAllDropsEverythingNotYetChecked() {
        imported("a");
        recheck.evictAll();
        assertThat(store.cache).isEmpty();
    }

    @Test
    void finishWaitsForTheLastBatch() {
        RevocationRecheck realClock = new RevocationRecheck(store, store, Duration.ofMillis(50), System::nanoTime, stats);
        store.database.add("a");
        store.cache.add("a");
        realClock.offer(List.of(new ImportedSession("a", List.of())));
        store.database.remove("a");
        realClock.finish();
        assertThat(store.cache).isEmpty();
    }

    @Test
    void zeroDelayMeansNoSecondCheck() {
        RevocationRecheck off = new RevocationRecheck(store, store, Duration.ZERO, clock::get, stats);
        store.cache.add("a");
        off.offer(List.of(new ImportedSession("a", List.of())));
        off.finish();
        assertThat(off.enabled()).isFalse();
        assertThat(store.cache).contains("a");
    }
}
