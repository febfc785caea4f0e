package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

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
    void aDueCheckWaitsWhileTheNodeIsBehindAndRunsOnceItIsQuiet() throws InterruptedException {
        store.requestsAtWork = 1;
        store.slowRequests = 1; // a backlog draining: every request finishes late
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofSeconds(2))) {
            imported(guard, "a", "b");
            store.database.remove("a");
            Thread.sleep(2_500); // due since 0.5 s; its bound is at 4 s
            assertThat(guard.pending()).as("gives way to the requests").isEqualTo(1);
            assertThat(store.cache).contains("a");
            store.requestsAtWork = 0;
            store.slowRequests = 0;
            awaitNothingPending(guard);
            assertThat(store.cache).containsExactly("b");
        }
    }

    @Test
    void aDueCheckRunsUnderSteadyTrafficBeforeItsBound() {
        store.requestsAtWork = 1; // never a quiet moment, but every request served in time
        List<RevocationGuard.Round> rounds = new CopyOnWriteArrayList<>();
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofSeconds(2), rounds::add)) {
            long offered = System.nanoTime();
            imported(guard, "a", "b");
            store.database.remove("a");
            awaitNothingPending(guard);
            assertThat(store.cache).containsExactly("b");
            assertThat(store.checkTimes.get(0)[0] - offered).as("after its delay, before its bound of 4 s")
                    .isBetween(TimeUnit.SECONDS.toNanos(2), TimeUnit.MILLISECONDS.toNanos(3_500));
            Awaitility.await("the round reported").atMost(Duration.ofSeconds(5)).until(() -> rounds.size() == 1);
            assertThat(rounds.get(0).steady()).isEqualTo(1);
            assertThat(rounds.get(0).message()).contains("0 in a quiet moment, 1 under steady traffic, 0 at their bound");
        }
    }

    @Test
    void aCheckRunsAtItsBoundWhenTheNodeStaysBehind() {
        store.requestsAtWork = 1;
        store.slowRequests = 1;
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofMillis(300))) {
            long offered = System.nanoTime();
            imported(guard, "a", "b");
            store.database.remove("a");
            awaitNothingPending(guard);
            assertThat(store.cache).containsExactly("b");
            assertThat(store.checkTimes.get(0)[0] - offered).as("not before twice the delay")
                    .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(600));
        }
    }

    @Test
    void moreRequestsAtWorkThanASteadyNodeHasKeepACheckWaiting() throws InterruptedException {
        store.requestsAtWork = RequestWatch.STEADY_AT_WORK + 1; // none finished late yet: they are all still at work
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofMillis(500))) {
            imported(guard, "a");
            Thread.sleep(900); // due since 0.4 s, its bound at 1 s
            assertThat(guard.pending()).isEqualTo(1);
            awaitNothingPending(guard);
        }
    }

    @Test
    void checksUnderTrafficRunOneAtATimeEachFollowedByARestNineTimesItsLength() {
        store.requestsAtWork = 1;
        store.checkMillis = 50;
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofSeconds(3))) {
            imported(guard, "a");
            imported(guard, "b");
            imported(guard, "c");
            awaitNothingPending(guard);
        }
        assertThat(store.mostChecksAtOnce).hasValue(1);
        List<long[]> times = new ArrayList<>(store.checkTimes);
        assertThat(times).hasSize(3);
        for (int i = 1; i < times.size(); i++) {
            long took = times.get(i - 1)[1] - times.get(i - 1)[0];
            assertThat(times.get(i)[0] - times.get(i - 1)[1]).as("rest after check %d", i)
                    .isGreaterThanOrEqualTo((long) (took * (1 - RevocationGuard.SHARE) / RevocationGuard.SHARE));
        }
    }

    @Test
    void onAnIdleNodeChecksRunWithoutRest() {
        store.checkMillis = 100; // a rest of 900 ms after each, were requests at work
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofMillis(1_200))) {
            for (String id : List.of("a", "b", "c", "d", "e")) {
                imported(guard, id);
            }
            // Due at 1.2 s, their bound at 2.4 s: with rests the fifth would begin 4.1 s after the first, at its bound.
            awaitNothingPending(guard);
        }
        List<long[]> times = new ArrayList<>(store.checkTimes);
        assertThat(times).hasSize(5);
        assertThat(times.get(4)[0] - times.get(0)[1]).as("no rest between them")
                .isLessThan(TimeUnit.MILLISECONDS.toNanos(1_000));
    }

    @Test
    void checksPastTheirBoundRunWithoutRest() {
        store.requestsAtWork = 1;
        store.slowRequests = 1;
        store.checkMillis = 100; // a rest of 900 ms after each, were they within their bound
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofMillis(100))) {
            for (String id : List.of("a", "b", "c", "d", "e")) {
                imported(guard, id);
            }
            Awaitility.await("every check, without the 3.6 s of rests").atMost(Duration.ofSeconds(3))
                    .until(() -> guard.pending() == 0);
        }
        assertThat(store.mostChecksAtOnce).hasValue(1);
    }

    @Test
    void reportsEachRoundOfChecksOnceTheQueueHasEmptied() {
        List<RevocationGuard.Round> rounds = new CopyOnWriteArrayList<>();
        try (RevocationGuard guard = new RevocationGuard(store, Duration.ofMillis(200), rounds::add)) {
            imported(guard, "a", "b");
            imported(guard, "c");
            store.database.remove("a");
            awaitNothingPending(guard);
            Awaitility.await("the round reported").atMost(Duration.ofSeconds(5)).until(() -> rounds.size() == 1);
            RevocationGuard.Round round = rounds.get(0);
            assertThat(round.checks()).isEqualTo(2);
            assertThat(round.sessions()).isEqualTo(3);
            assertThat(round.removed()).isEqualTo(1);
            assertThat(round.atBound()).as("the node was quiet").isZero();
            assertThat(round.steady()).isZero();
            assertThat(round.soonestSeconds()).as("not before the delay").isGreaterThanOrEqualTo(0.2);
            assertThat(round.latestSeconds()).isGreaterThanOrEqualTo(round.soonestSeconds()).isLessThan(0.4);
            assertThat(round.message()).contains("2 batches (3 sessions)", "2 in a quiet moment, 0 under steady traffic, 0 at their bound of 0 s",
                    "1 removed");

            store.requestsAtWork = 1;
            store.slowRequests = 1;
            imported(guard, "d");
            awaitNothingPending(guard);
            Awaitility.await("the next round reported").atMost(Duration.ofSeconds(5)).until(() -> rounds.size() == 2);
            assertThat(rounds.get(1).checks()).as("a round of its own").isEqualTo(1);
            assertThat(rounds.get(1).atBound()).isEqualTo(1);
            assertThat(rounds.get(1).soonestSeconds()).as("at twice the delay").isGreaterThanOrEqualTo(0.4);
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
