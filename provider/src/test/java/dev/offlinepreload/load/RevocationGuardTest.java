package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import dev.offlinepreload.plan.Batch;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class RevocationGuardTest {

    private final FakeStore store = new FakeStore();
    private final LoadStats stats = new LoadStats(null);

    private void imported(RevocationGuard guard, String... ids) {
        for (String id : ids) {
            store.database.add(id);
            store.cache.add(id);
        }
        guard.offer(new Batch(List.of(ids), true), List.of(ids).stream().map(id -> new ImportedSession(id, List.of())).toList(),
                stats);
    }

    private static void awaitNothingPending(RevocationGuard guard) {
        Awaitility.await("no check pending").atMost(Duration.ofSeconds(10)).until(() -> guard.pending() == 0);
    }

    @Test
    void removesSessionsDeletedAfterImportOnceTheDelayHasPassed() {
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofMillis(300))) {
            imported(guard, "a", "b");
            store.database.remove("a"); // logged out while it was being loaded
            assertThat(store.cache).as("not due yet").contains("a");
            awaitNothingPending(guard);
            assertThat(store.cache).containsExactly("b");
            assertThat(stats.revokedRemoved()).isEqualTo(1);
        }
    }

    @Test
    void evictsWhatItCannotCheck() {
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofMillis(50))) {
            imported(guard, "a", "b");
            store.databaseDown = true;
            awaitNothingPending(guard);
            assertThat(store.cache).as("unverifiable sessions are dropped, to be loaded lazily").isEmpty();
        }
    }

    @Test
    void closingEvictsEverythingNotYetChecked() {
        RevocationGuard guard = new RevocationGuard(store, Duration.ofSeconds(30));
        imported(guard, "a", "b");
        guard.close();
        assertThat(store.cache).isEmpty();
        assertThat(guard.pending()).isZero();
    }

    @Test
    void aBatchOfferedAfterCloseIsEvictedAtOnce() {
        RevocationGuard guard = new RevocationGuard(store, Duration.ofSeconds(30));
        guard.close();
        imported(guard, "a");
        assertThat(store.cache).isEmpty();
    }
}
