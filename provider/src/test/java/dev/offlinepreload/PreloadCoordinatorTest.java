package dev.offlinepreload;

import static dev.offlinepreload.FakeSessionStore.number;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.report.CapacityLog;
import dev.offlinepreload.report.PreloadMetrics;
import dev.offlinepreload.report.PreloadState;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's control flow against {@link FakeSessionStore}: the first pass's wait for the cluster, ownership,
 * re-planning when the topology moves, re-warming, database outages, shutdown, the start future and the capacity
 * check after each pass.
 */
class PreloadCoordinatorTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    /** The quiet start's wait in these tests (ten looks, 30 ms apart), instead of ten seconds. */
    private static final Duration QUIET_START = Duration.ofMillis(300);
    private static final Predicate<String> EVEN = id -> number(id) % 2 == 0;
    private static final Predicate<String> ODD = id -> number(id) % 2 == 1;

    private final FakeSessionStore store = new FakeSessionStore().withSessions(20);
    // The package-private PreloadMetrics(MeterRegistry) is out of reach from this package; the public constructor
    // registers on Micrometer's global registry, which has no backing registry in tests.
    private final PreloadMetrics metrics = new PreloadMetrics();
    private PreloadCoordinator coordinator;

    @AfterEach
    void closeCoordinator() {
        if (coordinator != null) {
            coordinator.close();
        }
    }

    private static PreloadConfig config(String... keyValues) {
        Map<String, String> values = new HashMap<>();
        values.put("batch-size", "2");
        values.put("workers-per-node", "1");
        values.put("revocation-recheck-seconds", "3600");
        values.put("database-retry-seconds", "1");
        // The control flow, not the governor (AdaptiveLimitTest, LoadRunTest), except where a test says so: with it a
        // pass waits for ten quiet seconds before it plans.
        values.put("adaptive-load", "false");
        for (int i = 0; i < keyValues.length; i += 2) {
            values.put(keyValues[i], keyValues[i + 1]);
        }
        return PreloadConfig.parse(values::get, 2);
    }

    private final List<String> capacityWarnings = new CopyOnWriteArrayList<>();
    private final List<String> log = new CopyOnWriteArrayList<>();
    private final Handler logCapture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            log.add(record.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void captureLog() {
        Logger.getLogger("dev.offlinepreload").addHandler(logCapture);
    }

    @AfterEach
    void releaseLog() {
        Logger.getLogger("dev.offlinepreload").removeHandler(logCapture);
    }

    private List<String> logLines() {
        return List.copyOf(log);
    }

    private CompletableFuture<Void> start(PreloadConfig config) {
        return start(config, QUIET_START);
    }

    private CompletableFuture<Void> start(PreloadConfig config, Duration quietStart) {
        coordinator = new PreloadCoordinator(config, store, metrics, new CapacityLog(capacityWarnings::add, capacityWarnings::add),
                quietStart);
        return coordinator.start();
    }

    private Set<String> ids(Predicate<String> owned) {
        return store.database.keySet().stream().filter(owned).collect(Collectors.toSet());
    }

    private static void await(String what, Callable<Boolean> condition) {
        Awaitility.await(what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(20)).until(condition);
    }

    private static void await(CountDownLatch latch, String what) throws InterruptedException {
        if (!latch.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new AssertionError("Timed out after " + TIMEOUT.toSeconds() + " s waiting for " + what);
        }
    }

    private static List<Thread> concat(Set<Thread> a, Set<Thread> b) {
        List<Thread> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    @Test
    void firstPassWaitsForTheExpectedClusterSize() throws Exception {
        store.moveTo(1, 1, id -> true);
        CompletableFuture<Void> firstPass = start(config("expected-cluster-size", "2", "join-timeout-seconds", "300"));

        await("the gate to wait", () -> metrics.state() == PreloadState.WAITING_FOR_NODES);
        int polled = store.topologyCalls.get();
        // The gate polls every 250 ms: several polls later it still waits and nothing was read or imported.
        await("the gate to poll the topology again", () -> store.topologyCalls.get() >= polled + 3);
        assertThat(store.planCalls).hasValue(0);
        assertThat(store.importCalls).hasValue(0);
        assertThat(store.cache).isEmpty();
        assertThat(firstPass).isNotDone();
        assertThat(metrics.state()).isEqualTo(PreloadState.WAITING_FOR_NODES);

        store.moveTo(2, 2, id -> true);
        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
    }

    @Test
    void sessionsRemovedThroughTheCacheDuringThePassAreNotMissingButSilentlyDroppedOnesAre() throws Exception {
        store.importHooks.put(3, () -> {
            List<String> first = store.requestedBatches.get(0);
            store.cache.remove(first.get(0)); // a logout: removed through the cache
            store.removedThroughCache.add(first.get(0));
            store.cache.remove(first.get(1)); // dropped by the cache without a removal
        });
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertThat(logLines()).as("the logout is no loss, the silent drop is").anyMatch(l -> l.contains(" finished in ")
                && l.contains("; 1 missing from the caches afterwards"));
        assertThat(store.cache).as("the repair pass loaded the dropped one again").contains(store.requestedBatches.get(0).get(1));
        assertThat(metrics.missing()).as("the repair pass's own check").isZero();
        assertThat(store.removalWindowsClosed).as("the pass and the repair pass").hasValue(2);
    }

    @Test
    void clientSessionsDroppedUnderThePassAreReportedAndLoadedOnceMore() throws Exception {
        store.clientSessionsPerSession = 3;
        // The third batch runs while something (Keycloak's clear after a merge, say) drops one client session of a
        // session the first batch put, without a removal through the cache: no logout.
        store.importHooks.put(3, () -> store.droppedClientSessions.add("client-1-" + store.requestedBatches.get(0).get(0)));
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        List<String> first = store.requestedBatches.get(0);
        assertThat(store.planCalls).as("a pass, then one more for what it found missing").hasValue(2);
        assertThat(store.requestedBatches.get(store.requestedBatches.size() - 1)).as("the repair reads only that session")
                .containsExactly(first.get(0));
        assertThat(store.droppedClientSessions).isEmpty();
        assertThat(metrics.missing()).as("the repair pass's own check").isZero();
        assertThat(logLines()).anyMatch(l -> l.contains("1 missing from the caches afterwards (1 client sessions)"))
                .anyMatch(l -> l.contains("0 missing from the caches afterwards (0 client sessions)"));
    }

    @Test
    void aTopologyChangeDuringTheCheckAfterThePassIsNoLossButANewPlan() throws Exception {
        // A node joins while the check runs: what moved to it leaves this node's caches, which is no loss.
        store.checkHook = () -> {
            if (store.topology.get().id() == 1) {
                store.cache.removeIf(ODD);
                store.moveTo(2, 2, EVEN);
            }
        };
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        await("the pass for the new topology", () -> store.planCalls.get() == 2 && metrics.state() == PreloadState.DONE);

        assertThat(logLines()).noneMatch(l -> l.contains("no longer cached; loading what is missing once more"))
                .noneMatch(l -> l.matches(".*[1-9][0-9]* missing from the caches afterwards.*"));
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(ids(EVEN));
    }

    @Test
    void loadsOnlyTheSessionsThisNodeOwns() throws Exception {
        store.moveTo(1, 2, EVEN);
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(ids(EVEN));
        assertThat(store.requestedBatches).allSatisfy(batch -> assertThat(batch).allMatch(EVEN));
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
    }

    @Test
    void plansAgainWhenTheTopologyMovesWhileLoading() throws Exception {
        store.moveTo(1, 2, EVEN);
        // 10 even sessions in batches of 2 = 5 batches; the topology moves during the 2nd.
        store.importHooks.put(2, () -> store.moveTo(2, 2, ODD));
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        List<List<String>> batches = new ArrayList<>(store.requestedBatches);
        assertThat(batches.subList(0, 2)).allSatisfy(batch -> assertThat(batch).allMatch(EVEN));
        // The stale plan was not finished: after the move only the new topology's sessions were read.
        assertThat(batches.subList(2, batches.size())).isNotEmpty()
                .allSatisfy(batch -> assertThat(batch).allMatch(ODD));
        assertThat(store.cache).containsAll(ids(ODD));
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
    }

    @Test
    void reWarmsOnlyWhatIsMissingWhenTheTopologyChanges() throws Exception {
        store.moveTo(1, 2, EVEN);
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(ids(EVEN));
        assertThat(store.planCalls).hasValue(1);

        List<String> dropped = List.of("s002", "s008", "s014");
        store.cache.removeAll(dropped);
        store.imported.clear();
        store.moveTo(2, 2, EVEN);

        // The second pass sets WAITING_FOR_NODES before it plans, so DONE after the second plan is its end.
        await("the re-warm pass to finish",
                () -> store.planCalls.get() == 2 && metrics.state() == PreloadState.DONE);
        assertThat(store.imported).containsExactlyInAnyOrderElementsOf(dropped);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(ids(EVEN));
    }

    @Test
    void aDatabaseOutageWhilePlanningFailsThePassAndTheNextTopologyChangeLoadsEverything() throws Exception {
        store.databaseDown = true;
        CompletableFuture<Void> firstPass = start(config());

        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS); // completes normally: the node is not taken down
        assertThat(metrics.state()).isEqualTo(PreloadState.FAILED);
        assertThat(store.planCalls.get()).isGreaterThan(1); // it retried before giving up
        assertThat(store.cache).isEmpty();

        store.databaseDown = false;
        store.moveTo(2, 1, id -> true);
        await("the next pass to load everything",
                () -> metrics.state() == PreloadState.DONE && store.cache.size() == store.database.size());
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void aDatabaseOutageWhileLoadingFailsThePassAndTheNextTopologyChangeLoadsEverything() throws Exception {
        store.importHooks.put(2, () -> store.databaseDown = true);
        CompletableFuture<Void> firstPass = start(config());

        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(metrics.state()).isEqualTo(PreloadState.FAILED);
        assertThat(store.importCalls.get()).isGreaterThan(2); // the failing batch was retried
        assertThat(store.cache).hasSize(2); // the first batch only

        store.databaseDown = false;
        store.moveTo(2, 1, id -> true);
        await("the next pass to load everything",
                () -> metrics.state() == PreloadState.DONE && store.cache.size() == store.database.size());
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void closeStopsTheLoadAndEvictsSessionsWhoseRevocationCheckHasNotRun() throws Exception {
        CountDownLatch inSecondBatch = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        store.importHooks.put(2, () -> {
            inSecondBatch.countDown();
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while reading", e); // what a JDBC driver would do
            }
        });
        start(config("revocation-recheck-seconds", "30"));

        await(inSecondBatch, "the second batch");
        assertThat(metrics.state()).isEqualTo(PreloadState.LOADING);
        List<String> importedByThePass = List.copyOf(store.imported);
        assertThat(importedByThePass).hasSize(2);
        assertThat(store.cache).containsAll(importedByThePass);

        coordinator.close();

        assertThat(store.cache).doesNotContainAnyElementsOf(importedByThePass);
        assertThat(store.evicted).containsAll(importedByThePass);
        // The executors' termination can be seen a moment before their threads are gone.
        assertThat(store.planningThreads).isNotEmpty();
        assertThat(store.workerThreads).isNotEmpty();
        for (Thread thread : concat(store.planningThreads, store.workerThreads)) {
            thread.join(TIMEOUT.toMillis());
            assertThat(thread.isAlive()).as("%s still alive", thread.getName()).isFalse();
        }
        assertThat(store.importCalls).hasValue(2); // nothing after the close
        assertThat(metrics.state()).isNotEqualTo(PreloadState.LOADING);
    }

    @Test
    void closeWaitsForAWorkerWhoseStatementIgnoresInterruptsAndLeavesNothingOfItCached() throws Exception {
        CountDownLatch inSecondBatch = new CountDownLatch(1);
        CountDownLatch statementTimesOut = new CountDownLatch(1);
        store.importHooks.put(2, () -> FakeSessionStore.hangUninterruptibly(inSecondBatch, statementTimesOut));
        start(config("revocation-recheck-seconds", "30"));
        await(inSecondBatch, "the second batch");

        CompletableFuture<Void> closing = CompletableFuture.runAsync(coordinator::close);
        // close() must not return while the worker is still inside its statement: it could write afterwards
        Thread.sleep(300);
        assertThat(closing).as("close() returned while a worker was still reading").isNotDone();
        statementTimesOut.countDown();
        closing.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        // A pool's termination is seen a moment before its threads are gone: they have left their tasks, so nothing
        // of theirs writes any more; a thread still inside a task would not end within the second.
        for (Thread thread : concat(store.planningThreads, store.workerThreads)) {
            thread.join(1000);
            assertThat(thread.isAlive()).as("%s alive after close() returned", thread.getName()).isFalse();
        }
        assertThat(store.cache).as("what the pass put is evicted: its revocation check cannot run").isEmpty();
        assertThat(store.importCalls).hasValue(2);
    }

    @Test
    void closeLetsAStartupHeldForTheFirstPassGoOnAtOnceWhilePlanningHangs() throws Exception {
        CountDownLatch planning = new CountDownLatch(1);
        CountDownLatch statementTimesOut = new CountDownLatch(1);
        store.keysHook = () -> FakeSessionStore.hangUninterruptibly(planning, statementTimesOut);
        CompletableFuture<Void> firstPass = start(config());
        await(planning, "the key stream");

        CompletableFuture<Void> closing = CompletableFuture.runAsync(coordinator::close);
        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(closing).as("close() waits for the hung key stream").isNotDone();
        statementTimesOut.countDown();
        closing.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        // As above: the pool's termination is seen a moment before its thread is gone.
        for (Thread thread : concat(store.planningThreads, store.countingThreads)) {
            thread.join(1000);
            assertThat(thread.isAlive()).as("%s alive after close() returned", thread.getName()).isFalse();
        }
        assertThat(store.importCalls).as("no batch after close()").hasValue(0);
        assertThat(logLines()).noneMatch(l -> l.contains("did not stop"));
    }

    /**
     * A rolling shutdown: a node began a re-warm for the segments of a node that had left, and its own shutdown came
     * while it planned. The statement in flight returned (a JDBC driver need not heed the interrupt), the pass went on
     * to its load, found the progress ticker shut down, and logged an ERROR saying preloading had failed (runs bg).
     */
    @Test
    void aPassThatGoesOnAfterCloseEndsAsAStopNotAsAFailure() throws Exception {
        CountDownLatch planning = new CountDownLatch(1);
        CountDownLatch statementReturns = new CountDownLatch(1);
        store.keysHook = () -> FakeSessionStore.returnUninterruptibly(planning, statementReturns);
        CompletableFuture<Void> firstPass = start(config());
        await(planning, "the key stream");

        CompletableFuture<Void> closing = CompletableFuture.runAsync(coordinator::close);
        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        Thread.sleep(200); // close() shuts the executors down right after it lets the first pass's waiters go
        statementReturns.countDown();
        closing.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertThat(logLines()).noneMatch(l -> l.contains("failed"));
        assertThat(logLines()).as("no load announced after close()").noneMatch(l -> l.contains("loading 20 sessions"));
        assertThat(logLines()).anyMatch(l -> l.contains("stopped: the node is shutting down"));
        assertThat(metrics.state()).isNotEqualTo(PreloadState.FAILED);
        assertThat(store.importCalls).as("no batch after close()").hasValue(0);
        assertThat(store.countCalls).as("no count after close()").hasValue(0);
    }

    @Test
    void startCompletesWhenTheFirstPassIsOver() throws Exception {
        CountDownLatch inFirstBatch = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        store.importHooks.put(1, () -> {
            inFirstBatch.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
        CompletableFuture<Void> firstPass = start(config());

        await(inFirstBatch, "the first batch");
        assertThat(firstPass).isNotDone();

        release.countDown();
        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(firstPass).isCompletedWithValue(null);
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void moreSessionsThanFitAreCountedAndWarnedAboutOncePerTopology() throws Exception {
        store.sessionsMaxCount = 10; // 9 after the 10% headroom, for 20 sessions
        store.clientSessionsMaxCount = 10;
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertThat(store.cache).hasSize(9);
        assertThat(metrics.databaseSessions()).isEqualTo(20);
        assertThat(metrics.capacity()).isEqualTo(9);
        assertThat(capacityWarnings).singleElement().asString()
                .contains("the database holds 20 offline sessions", "the caches of 1 node take 9",
                        "The 11 least recently used (11 of them owned by this node)",
                        "cache-embedded-offline-sessions-max-count=22 ", "cache-embedded-offline-client-sessions-max-count=22 ");

        // A re-warm for the same cluster size but a new topology says it again, once.
        store.moveTo(2, 1, id -> true);
        await("the second pass to count", () -> store.countCalls.get() == 2 && metrics.state() == PreloadState.DONE);
        assertThat(capacityWarnings).hasSize(2);
    }

    @Test
    void followingTheAdviceLoadsEverythingAndSaysNothing() throws Exception {
        store.sessionsMaxCount = 22;
        store.clientSessionsMaxCount = 22;
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
        assertThat(metrics.databaseSessions()).isEqualTo(20);
        assertThat(metrics.capacity()).isEqualTo(20);
        assertThat(capacityWarnings).isEmpty();
    }

    @Test
    void theCapacityCountRunsOnceTheKeysHaveStreamedAndItsLimitHolds() throws Exception {
        store.countWaitsForKeys = true; // a count before the key stream would wait 5 s and fail
        store.clientSessionsPerSession = 2;
        store.clientSessionsMaxCount = 20; // 18 client sessions after the headroom = 9 sessions of 2
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertThat(metrics.databaseSessions()).isEqualTo(20);
        assertThat(metrics.capacity()).isEqualTo(9);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(
                IntStream.range(11, 20).mapToObj(FakeSessionStore::id).toList());
    }

    @Test
    void aFailedCountLeavesTheLoadDone() throws Exception {
        store.sessionsMaxCount = 10;
        store.clientSessionsMaxCount = 10;
        store.countFails = true;
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
        assertThat(store.cache).hasSize(9);
        assertThat(metrics.databaseSessions()).isEqualTo(-1);
        assertThat(capacityWarnings).isEmpty();
    }

    @Test
    void withSeveralClientSessionsPerSessionTheMostRecentOfWhatTheClientSessionCacheHoldsAreLoaded() throws Exception {
        store.clientSessionsPerSession = 3;
        store.sessionsMaxCount = 100; // 90 sessions after the headroom: no bound for 20
        store.clientSessionsMaxCount = 30; // 27 client sessions = 9 sessions of 3
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        // s011..s019 were refreshed last (1011..1019)
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(
                IntStream.range(11, 20).mapToObj(FakeSessionStore::id).toList());
        assertThat(metrics.capacity()).isEqualTo(9);
        assertThat(capacityWarnings).singleElement().asString().contains("(60 client sessions, 3.00 per session)",
                "cache-embedded-offline-sessions-max-count=100 ", "cache-embedded-offline-client-sessions-max-count=66 ");
    }

    @Test
    void withPersistentSessionsAndAdaptiveLoadNothingStartsUntilTheNodeHasBeenQuietForTheQuietStart() throws Exception {
        store.allStarted = true;
        store.busyRequests = 1;
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true"));
        await("the quiet start", () -> metrics.state() == PreloadState.WAITING_FOR_QUIET);
        Thread.sleep(QUIET_START.toMillis() * 4);
        assertThat(store.topologyCalls).as("the gate polled the topology while requests were at work").hasValue(0);
        assertThat(store.planCalls).hasValue(0);
        assertThat(store.countCalls).hasValue(0);
        assertThat(threadNames()).as("threads of the pass").noneMatch(n -> n.equals("offline-preload-governor"));
        assertThat(firstPass).isNotDone();
        assertThat(logLines()).anyMatch(l -> l.contains("starts once the node has had no request for"));

        store.busyRequests = 0;
        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void theQuietStartCountsItsQuietFromTheLastRequest() throws Exception {
        // A short request every 200 ms: never the 300 ms in a row the quiet start needs, though most looks see none.
        AtomicBoolean traffic = new AtomicBoolean(true);
        Thread requests = new Thread(() -> {
            while (traffic.get()) {
                store.arrived();
                sleepQuietly(200);
            }
        });
        requests.start();
        try {
            start(config("adaptive-load", "true"));
            Thread.sleep(QUIET_START.toMillis() * 6);
            assertThat(metrics.state()).isEqualTo(PreloadState.WAITING_FOR_QUIET);
            assertThat(store.topologyCalls).hasValue(0);
        } finally {
            traffic.set(false);
            requests.join();
        }
        await("the pass to finish", () -> metrics.state() == PreloadState.DONE);
    }

    @Test
    void aNodeWithNoTrafficLoadsQuietStartSecondsAfterEveryNodeHasStartedWithoutTheGovernorWaitingAgain() throws Exception {
        // With the quiet start of 4 s, quiet-start-seconds=5 is 2 s: the pass begins then and its governor runs at its
        // first quiet tick. Without the started signal's shortcut the quiet start alone takes 7 s, and a governor that
        // waits again 2 s more.
        store.allStarted = true;
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true", "quiet-start-seconds", "5"),
                Duration.ofSeconds(4));
        firstPass.get(3_500, TimeUnit.MILLISECONDS);
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
        assertThat(logLines()).noneMatch(l -> l.contains("plans and loads once the node is quiet"));
    }

    @Test
    void byDefaultTrafficThatComesEightSecondsAfterEveryNodeHasStartedFindsNoPassBegunAndWaitsForItsQuiet() throws Exception {
        // With the quiet start of 1 s everything runs at a tenth: quiet-start-seconds' default of 30 s is 3 s. The
        // traffic of a load balancer that admits the nodes late comes at 0.8 s; the old 5-s wait had begun the pass
        // at 0.5 s (restart window as).
        store.allStarted = true;
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true"), Duration.ofSeconds(1));
        Thread.sleep(800);
        assertThat(metrics.state()).isEqualTo(PreloadState.WAITING_FOR_QUIET);
        assertThat(store.topologyCalls).as("the gate polled the topology before the traffic came").hasValue(0);
        store.busyRequests = 1;
        Thread.sleep(2_700); // past the 3 s: the requests, not quiet-start-seconds, decide now
        assertThat(metrics.state()).isEqualTo(PreloadState.WAITING_FOR_QUIET);
        assertThat(store.planCalls).hasValue(0);
        store.busyRequests = 0;
        long quietSince = System.nanoTime();
        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat((System.nanoTime() - quietSince) / 1_000_000).as("the 10 s (here 1 s) without a request after traffic")
                .isGreaterThanOrEqualTo(900);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void quietStartSecondsZeroBeginsTheFirstPassAsSoonAsEveryNodeHasStarted() throws Exception {
        store.allStarted = true;
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true", "quiet-start-seconds", "0"),
                Duration.ofSeconds(10)); // the production looks: one of 500 ms
        firstPass.get(2_500, TimeUnit.MILLISECONDS);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
        assertThat(logLines()).anyMatch(l -> l.contains("had no request for 500 ms after all 1 nodes have started"));
    }

    @Test
    void aNodeThatHasSeenARequestWaitsTheWholeQuietStartThoughEveryNodeHasStarted() throws Exception {
        store.allStarted = true;
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true"), Duration.ofSeconds(4));
        await("the quiet start", () -> metrics.state() == PreloadState.WAITING_FOR_QUIET);
        store.arrived(); // the traffic came, then paused
        Thread.sleep(3_000);
        assertThat(metrics.state()).isEqualTo(PreloadState.WAITING_FOR_QUIET);
        assertThat(store.planCalls).hasValue(0);
        assertThat(store.startedCalls).as("asked whether the cluster started after a request").hasValue(0);
        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void aRequestAfterTheQuietStartsLastLookMakesTheFirstGovernorWaitForItsQuietSecond() throws Exception {
        // The quiet start ends after its one look (quiet-start-seconds=0): quiet. A short request then arrives before
        // the pass's governor has looked once (here as the coordinator looks at the topology). The governor sees it
        // through the quiet start's view and waits for a quiet second (1 s) before the load, as after any request; a
        // view of its own, begun after the request, would let the load run at its first tick.
        store.allStarted = true;
        AtomicLong arrivedAt = new AtomicLong();
        store.topologyHook = () -> {
            if (arrivedAt.compareAndSet(0, System.nanoTime())) {
                store.arrived();
            }
        };
        AtomicLong plannedAt = new AtomicLong();
        store.keysHook = () -> plannedAt.compareAndSet(0, System.nanoTime());
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true", "quiet-start-seconds", "0"),
                Duration.ofSeconds(1));
        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(arrivedAt.get()).as("the request arrived").isNotZero();
        assertThat((plannedAt.get() - arrivedAt.get()) / 1_000_000)
                .as("ms from the request to the plan: the governor's quiet second after it")
                .isGreaterThanOrEqualTo(900);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void withoutEveryNodesStartedSignalThreeQuietStartsThenTheGovernorDoesNotWaitItsTenSecondsAgain() throws Exception {
        store.allStarted = false; // a peer without this provider never says it started
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true", "quiet-start-seconds", "5"),
                Duration.ofSeconds(1));
        Thread.sleep(2_500);
        assertThat(metrics.state()).as("a peer that joined has not started yet, or never says so")
                .isEqualTo(PreloadState.WAITING_FOR_QUIET);
        firstPass.get(3, TimeUnit.SECONDS);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void theQuietStartWaitsForTheExpectedClusterSizeThenQuietStartSecondsOnceAllHaveStarted() throws Exception {
        store.allStarted = true; // the one member has started; two more are expected
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true", "expected-cluster-size", "3",
                "quiet-start-seconds", "5"), Duration.ofSeconds(1));
        Thread.sleep(4_000); // more than the 3 s it would wait had the three joined without saying they started
        assertThat(metrics.state()).isEqualTo(PreloadState.WAITING_FOR_QUIET);
        assertThat(store.startedCalls.get()).isPositive();

        store.moveTo(2, 3, id -> true); // the other two join, and have started
        firstPass.get(2, TimeUnit.SECONDS);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void aClusterThatNeverReachesTheExpectedSizeLoadsAfterTheJoinTimeoutCountedFromTheStart() throws Exception {
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true", "expected-cluster-size", "3",
                "join-timeout-seconds", "4", "quiet-start-seconds", "5"), Duration.ofSeconds(1));
        Thread.sleep(3_500);
        assertThat(metrics.state()).isEqualTo(PreloadState.WAITING_FOR_QUIET);
        assertThat(logLines()).anyMatch(l -> l.contains("waits for 3 nodes to join and start (at most 4 s"));
        // After the join timeout of 4 s, with the gate's share of it spent already: not 4 s more.
        firstPass.get(2, TimeUnit.SECONDS);
        assertThat(logLines()).anyMatch(l -> l.contains("waited 4 s for 3 nodes, 1 present"));
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void aNodeThatIsNeverQuietStartsItsPassAfterTheQuietStartsPatience() throws Exception {
        store.busyRequests = 1;
        long began = System.nanoTime();
        start(config("adaptive-load", "true"));
        await("the gate", () -> store.topologyCalls.get() > 0);
        long waitedMillis = (System.nanoTime() - began) / 1_000_000;
        assertThat(waitedMillis).as("waited for the patience, not less")
                .isGreaterThanOrEqualTo(QUIET_START.toMillis() * PreloadCoordinator.QUIET_START_PATIENCE);
        assertThat(logLines()).anyMatch(l -> l.contains("the first pass begins all the same"));
        assertThat(store.planCalls).as("the governor still holds the load back").hasValue(0);
    }

    @Test
    void theQuietStartAppliesNeitherWithVolatileSessionsNorWithHoldReadinessNorWithoutAdaptiveLoad() throws Exception {
        store.busyRequests = 1;
        start(config("adaptive-load", "true", "hold-readiness", "true"));
        await("the gate, at once", () -> store.topologyCalls.get() > 0);
        coordinator.close();

        store.sessionMode = "volatile";
        start(config("adaptive-load", "true"));
        await("the gate, at once", () -> store.topologyCalls.get() > 1);
        coordinator.close();

        store.sessionMode = "persistent";
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
        assertThat(logLines()).noneMatch(l -> l.contains("starts once the node has had no request for"));
    }

    @Test
    void aShutdownDuringTheQuietStartEndsTheFirstPassWithoutTouchingTheStore() throws Exception {
        store.busyRequests = 1;
        CompletableFuture<Void> firstPass = start(config("adaptive-load", "true"));
        await("the quiet start", () -> metrics.state() == PreloadState.WAITING_FOR_QUIET);
        coordinator.close();
        firstPass.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(store.topologyCalls).hasValue(0);
        // close() returns once the executor has terminated; its worker thread may still be returning from run()
        await("the coordinator's thread to end",
                () -> threadNames().stream().noneMatch(n -> n.startsWith("offline-preload-coordinator")));
    }

    private static Set<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .collect(Collectors.toSet());
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void withAdaptiveLoadAPassDoesNotEvenPlanWhileRequestsAreAtWork() throws Exception {
        store.busyRequests = 2;
        start(config("adaptive-load", "true"));
        Thread.sleep(1500);
        assertThat(store.planCalls).as("planned while requests were at work").hasValue(0);

        store.busyRequests = 0; // quiet from now: one second, as the pass has seen requests
        await("the pass to finish", () -> metrics.state() == PreloadState.DONE);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void withAdaptiveLoadAPassUnderTrafficThatNeverPausesWaitsWhileTheNodeIsBehindAndLoadsOnceItKeepsUp() throws Exception {
        store.sessionMode = "volatile"; // no quiet start
        store.busyRequests = 1; // a request at work at every look: never a quiet second
        store.slowRequests = 1; // and each look sees one that finished slow: a restart's backlog
        start(config("adaptive-load", "true", "steady-traffic-percent", "50"));
        Thread.sleep(6_500); // longer than the 5 s a node must keep up with its traffic before the load takes a share
        assertThat(store.planCalls).as("planned while the node was behind").hasValue(0);

        store.slowRequests = 0; // the backlog has drained; the traffic goes on
        await("the pass to finish under steady traffic", () -> metrics.state() == PreloadState.DONE);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void withAdaptiveLoadRequestsThatComeWhileAPassPlansStopThePlanningAndItPlansAgainOnceQuiet() throws Exception {
        store.keysHook = () -> {
            if (store.planCalls.get() == 1) {
                store.busyRequests = 2; // a restarted node's first requests arrive as its pass begins to plan
                try {
                    Thread.sleep(500); // the governor sees them (it looks every 100 ms)
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        start(config("adaptive-load", "true"));
        await("the first planning", () -> store.planCalls.get() == 1);
        Thread.sleep(1500);
        assertThat(store.cache).as("loaded while requests were at work").isEmpty();
        // Until 2026-11-30 the count began beside the key stream and ran on into the requests (runs bk, bm).
        assertThat(store.countCalls).as("sessions counted while requests were at work").hasValue(0);

        store.busyRequests = 0;
        await("the pass to finish", () -> metrics.state() == PreloadState.DONE);
        assertThat(store.planCalls).as("planned again from the start once quiet").hasValue(2);
        assertThat(store.countCalls).as("counted once, however often planning yields").hasValue(1);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void withAdaptiveLoadAQuietPassCountsItsQuietSecondsFromTheMomentEveryNodeHasStarted() throws Exception {
        store.allStarted = false; // a peer still starting: its traffic (and ours) comes once it is ready
        // The governor's own wait: without the quiet start, which has waited already where it applies.
        start(config("adaptive-load", "true", "hold-readiness", "true"));
        Thread.sleep(4_000); // twice the quiet seconds it needs once every node has started
        assertThat(store.planCalls).as("planned before every node had started").hasValue(0);

        store.allStarted = true;
        await("the pass to finish", () -> metrics.state() == PreloadState.DONE);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
    }

    @Test
    void withVolatileSessionsTheHotTierLoadsFromItsOwnQueryWhileRequestsAreAtWorkAndTheRestWaits() throws Exception {
        store.sessionMode = "volatile";
        store.hotSince = 1_015; // s015..s019
        store.busyRequests = 2;
        start(config("adaptive-load", "true"));
        await("the hot tier", () -> store.cache.size() == 5);
        Thread.sleep(1500);
        assertThat(store.cache).as("loaded while requests were at work")
                .containsExactlyInAnyOrder("s015", "s016", "s017", "s018", "s019");
        assertThat(store.requestedBatches.get(0)).as("most recent first").containsExactly("s019", "s018");
        assertThat(store.planCalls).as("keys scanned while requests were at work").hasValue(0);
        assertThat(store.countCalls).as("sessions counted while requests were at work").hasValue(0);
        assertThat(metrics.state()).isEqualTo(PreloadState.LOADING);

        store.busyRequests = 0;
        await("the pass to finish", () -> metrics.state() == PreloadState.DONE);
        assertThat(store.cache).containsExactlyInAnyOrderElementsOf(store.database.keySet());
        assertThat(store.imported).as("each session imported once").doesNotHaveDuplicates().hasSize(20);
        assertThat(store.recentCalls).as("the hot query: the hot stage's plan and the rest's").hasValue(2);
        assertThat(logLines()).anyMatch(l -> l.contains("loading 15 sessions (0 recently refreshed first; 20 in the "
                + "database, 20 owned by this node, 5 already cached"));
    }

    @Test
    void withVolatileSessionsStartupWaitsForTheHotTierAndNoLongerThanIt() throws Exception {
        store.sessionMode = "volatile";
        store.hotSince = 1_015; // s015..s019: three hot batches, then the rest
        CountDownLatch inFirstHotBatch = new CountDownLatch(1);
        CountDownLatch releaseFirstHotBatch = new CountDownLatch(1);
        store.importHooks.put(1, () -> {
            inFirstHotBatch.countDown();
            try {
                releaseFirstHotBatch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        start(config("adaptive-load", "true")); // hold-readiness=auto, the default
        assertThat(inFirstHotBatch.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        Thread.sleep(300);
        assertThat(coordinator.hotTierLoaded()).as("startup held while the hot tier loads").isNotDone();
        releaseFirstHotBatch.countDown();
        coordinator.hotTierLoaded().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(store.cache).as("released once the hot tier was in")
                .containsAll(List.of("s015", "s016", "s017", "s018", "s019"));
        coordinator.close();

        start(config("hold-readiness", "false"));
        assertThat(coordinator.hotTierLoaded()).as("hold-readiness=false").isDone();
        coordinator.close();
        start(config("hold-readiness", "true"));
        assertThat(coordinator.hotTierLoaded()).as("hold-readiness=true waits for the whole pass instead").isDone();
        coordinator.close();
        store.sessionMode = "persistent";
        start(config());
        assertThat(coordinator.hotTierLoaded()).as("no hot stage with persistent sessions").isDone();
    }

    @Test
    void startupDoesNotWaitForTheHotTierOfANodeWhoseExpectedPeersHaveNotJoined() throws Exception {
        store.sessionMode = "volatile";
        store.hotSince = 1_015;
        // Pods started one by one: the second is only created once this one is ready.
        start(config("expected-cluster-size", "2", "join-timeout-seconds", "3600"));
        coordinator.hotTierLoaded().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(store.cache).as("the gate still waits for the second node").isEmpty();
        assertThat(logLines()).anyMatch(l -> l.contains("startup does not wait for the recently refreshed sessions, as "
                + "fewer than the 2 expected nodes have joined"));
    }

    @Test
    void aFirstPassThatFailsBeforeItsHotStageHoldsStartupNoLonger() throws Exception {
        store.sessionMode = "volatile";
        store.hotSince = 1_015;
        store.removalWatchFails = true;
        start(config());
        coordinator.hotTierLoaded().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(metrics.state()).isEqualTo(PreloadState.FAILED);
        assertThat(store.cache).isEmpty();
    }

    @Test
    void withVolatileSessionsTheCheckAfterThePassCoversTheHotTierToo() throws Exception {
        store.sessionMode = "volatile";
        store.hotSince = 1_016; // s016..s019: two hot batches, then the rest
        store.importHooks.put(3, () -> store.cache.remove("s019")); // dropped silently under the rest's load
        start(config());
        await("the pass and its repair", () -> metrics.state() == PreloadState.DONE
                && logLines().stream().anyMatch(l -> l.contains("loading what is missing once more")));
        await("the repair pass", () -> store.cache.containsAll(store.database.keySet()));
        assertThat(logLines()).anyMatch(l -> l.contains("1 missing from the caches afterwards"));
    }

    @Test
    void withPersistentSessionsThereIsNoHotStage() throws Exception {
        store.hotSince = 1_015;
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
        assertThat(store.recentCalls).as("the hot query, in the one plan").hasValue(1);
        assertThat(store.requestedBatches.get(0)).as("the hot tier still first").containsExactly("s019", "s018");
        assertThat(logLines()).noneMatch(l -> l.contains("recently refreshed sessions first"));
    }

    @Test
    void withVolatileSessionsATopologyChangeDuringTheHotStagePlansItAgainForTheNewTopology() throws Exception {
        store.sessionMode = "volatile";
        store.hotSince = 1_010; // s010..s019: five hot batches
        store.moveTo(1, 2, EVEN);
        store.importHooks.put(2, () -> store.moveTo(2, 2, ODD));
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        List<List<String>> batches = new ArrayList<>(store.requestedBatches);
        assertThat(batches.subList(0, 2)).allSatisfy(batch -> assertThat(batch).allMatch(EVEN));
        assertThat(batches.subList(2, batches.size())).isNotEmpty().allSatisfy(batch -> assertThat(batch).allMatch(ODD));
        assertThat(logLines()).anyMatch(l -> l.contains("stopped by a topology change"));
        assertThat(store.cache).containsAll(ids(ODD));
        assertThat(metrics.state()).isEqualTo(PreloadState.DONE);
    }

    @Test
    void withVolatileSessionsADatabaseOutageWhilePlanningTheHotTierFailsThePass() throws Exception {
        store.sessionMode = "volatile";
        store.hotSince = 1_015;
        store.databaseDown = true;
        start(config()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(metrics.state()).isEqualTo(PreloadState.FAILED);
        assertThat(store.recentCalls.get()).as("retried").isGreaterThan(1);
        assertThat(store.planCalls).as("no key scan after the hot tier's plan failed").hasValue(0);
        assertThat(logLines()).anyMatch(l -> l.contains("the database kept failing for 1 s while planning"));
        assertThat(store.cache).isEmpty();
    }
}
