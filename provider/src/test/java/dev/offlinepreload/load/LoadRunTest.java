package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

import dev.offlinepreload.plan.Batch;
import org.junit.jupiter.api.Test;

class LoadRunTest {

    private final FakeStore store = new FakeStore();
    private final LoadStats stats = new LoadStats(new LoadStats(null));

    private int batchSize;

    /** Sessions s0..s(n-1) in batches of {@code batchSize}, in id order. */
    private List<Batch> plan(int n) {
        List<String> ids = new ArrayList<>();
        IntStream.range(0, n).forEach(i -> {
            store.database.add("s" + i);
            ids.add("s" + i);
        });
        List<Batch> batches = new ArrayList<>();
        for (int from = 0; from < n; from += batchSize) {
            batches.add(new Batch(ids.subList(from, Math.min(n, from + batchSize)), true));
        }
        return batches;
    }

    private LoadRun run(int batchSize, int workers, Duration retryFor, AtomicBoolean stop) {
        return run(batchSize, workers, retryFor, stop, new RateLimit(0, System::nanoTime));
    }

    private LoadRun run(int batchSize, int workers, Duration retryFor, AtomicBoolean stop, RateLimit rate) {
        this.batchSize = batchSize;
        return run(workers, retryFor, stop, rate, fullSpeed(workers));
    }

    private LoadRun run(int workers, Duration retryFor, AtomicBoolean stop, RateLimit rate, LoadGovernor governor) {
        return new LoadRun(store, workers, new Retry(retryFor, Duration.ofMillis(1), Duration.ofMillis(5), stop::get), rate,
                governor, new RevocationGuard(store, Duration.ZERO), row -> { }, stop::get);
    }

    /** A governor that is not started: its limit stays where the AdaptiveLimit is. */
    private LoadGovernor fullSpeed(int workers) {
        return new LoadGovernor(new AdaptiveLimit(workers, false), store.newRequestWatch(), () -> true, limit -> { }, false);
    }

    /** The store's requests as a governor sees them, {@code n} at work all the time. */
    private RequestWatch requestsAtWork(int n) {
        store.requestsAtWork = n;
        return store.newRequestWatch();
    }

    private static final Duration SECOND = Duration.ofSeconds(1);

    @Test
    void loadsEverySessionOnceInBatchesOfTheConfiguredSize() throws Exception {
        LoadRun.Outcome outcome = run(10, 3, SECOND, new AtomicBoolean()).run(plan(95), Long.MAX_VALUE, stats);

        assertThat(outcome).isEqualTo(LoadRun.Outcome.COMPLETE);
        assertThat(store.cache).hasSize(95);
        assertThat(stats.loaded()).isEqualTo(95);
        assertThat(store.batches).hasSize(10).allSatisfy(b -> assertThat(b.size()).isLessThanOrEqualTo(10));
        assertThat(store.batches.stream().flatMap(List::stream)).doesNotHaveDuplicates().hasSize(95);
    }

    @Test
    void atALimitBelowOneWorkerOnlyOneWorkerLoadsAndTheLoadStillCompletes() throws Exception {
        AdaptiveLimit limit = new AdaptiveLimit(4, true);
        for (int tick = 0; tick < AdaptiveLimit.PATIENCE_TICKS; tick++) {
            limit.update(3, false, 10, true); // requests at work, threads 10 ms late for a CPU
        }
        assertThat(limit.limit()).isEqualTo(AdaptiveLimit.FLOOR);

        LoadRun.Outcome outcome = run(4, SECOND, new AtomicBoolean(), new RateLimit(0, System::nanoTime),
                new LoadGovernor(limit, requestsAtWork(3), () -> true, l -> { }, false)).run(withBatchSize(10, 50), Long.MAX_VALUE, stats);

        assertThat(outcome).isEqualTo(LoadRun.Outcome.COMPLETE);
        assertThat(store.cache).hasSize(50);
        assertThat(store.importingThreads).as("one of the four workers").hasSize(1);
    }

    @Test
    void pausedWithVolatileSessionsItStillLoadsTheHotBatchesOnOneWorkerAndNothingOfTheTail() throws Exception {
        assertThat(runPausedWithHotBatchesFor(Duration.ofMillis(500), true)).isEqualTo(LoadRun.Outcome.STOPPED);
        assertThat(store.cache).containsExactlyInAnyOrder("s5", "s3", "s1");
        assertThat(store.importingThreads).as("one of the four workers").hasSize(1);
    }

    @Test
    void pausedWithPersistentSessionsItLoadsNothingNotEvenTheHotBatches() throws Exception {
        assertThat(runPausedWithHotBatchesFor(Duration.ofMillis(500), false)).isEqualTo(LoadRun.Outcome.STOPPED);
        assertThat(store.cache).isEmpty();
    }

    /** Two hot batches, then two of the tail, with the limit at 0 (requests at work, threads late), stopped after {@code runFor}. */
    private LoadRun.Outcome runPausedWithHotBatchesFor(Duration runFor, boolean hotUnpaused) throws Exception {
        AdaptiveLimit limit = new AdaptiveLimit(4, true);
        limit.update(3, false, 10, true);
        assertThat(limit.limit()).isZero();
        for (int i = 0; i < 6; i++) {
            store.database.add("s" + i);
        }
        List<Batch> batches = List.of(new Batch(List.of("s5", "s3"), false, true), new Batch(List.of("s1"), false, true),
                new Batch(List.of("s0", "s2"), true), new Batch(List.of("s4"), true));
        AtomicBoolean stop = new AtomicBoolean();
        Thread stopper = new Thread(() -> {
            try {
                Thread.sleep(runFor.toMillis()); // far longer than the hot batches take, and than a worker's 50 ms look
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            stop.set(true);
        });
        stopper.start();
        LoadRun.Outcome outcome = run(4, SECOND, stop, new RateLimit(0, System::nanoTime),
                new LoadGovernor(limit, requestsAtWork(3), () -> true, l -> { }, hotUnpaused)).run(batches, Long.MAX_VALUE, stats);
        stopper.join();
        return outcome;
    }

    private List<Batch> withBatchSize(int size, int sessions) {
        batchSize = size;
        return plan(sessions);
    }

    @Test
    void aSingleWorkerTakesBatchesInPlanOrder() throws Exception {
        run(4, 1, SECOND, new AtomicBoolean()).run(plan(10), Long.MAX_VALUE, stats);
        assertThat(store.batches.get(0)).containsExactly("s0", "s1", "s2", "s3");
        assertThat(store.batches.get(2)).containsExactly("s8", "s9");
    }

    @Test
    void theRateLimitSpacesBatchesOut() throws Exception {
        long start = System.nanoTime();
        // 5 batches of 10 at 100 sessions/s: the first goes at once, each later one waits 0.1 s.
        run(10, 2, SECOND, new AtomicBoolean(), new RateLimit(100, System::nanoTime)).run(plan(50), Long.MAX_VALUE, stats);
        assertThat(stats.loaded()).isEqualTo(50);
        assertThat(System.nanoTime() - start).as("elapsed ns").isGreaterThanOrEqualTo(Duration.ofMillis(390).toNanos());
    }

    @Test
    void retriesAFailingBatchThenSucceeds() throws Exception {
        store.failuresLeft.set(2);
        run(100, 1, SECOND, new AtomicBoolean()).run(plan(5), Long.MAX_VALUE, stats);
        assertThat(store.batches).hasSize(3);
        assertThat(stats.loaded()).isEqualTo(5);
        assertThat(stats.failed()).isZero();
    }

    @Test
    void reportsABatchThatKeepsFailingWhileOthersSucceedAndGoesOn() throws Exception {
        LoadRun run = run(5, 2, Duration.ofMillis(200), new AtomicBoolean());
        List<Batch> plan = plan(40);
        store.poison = "s0";
        LoadRun.Outcome outcome = run.run(plan, Long.MAX_VALUE, stats);
        assertThat(outcome).isEqualTo(LoadRun.Outcome.COMPLETE);
        assertThat(stats.failed()).isEqualTo(5);
        assertThat(stats.loaded()).isEqualTo(35);
    }

    @Test
    void givesUpTheRunWhenTheDatabaseStaysDownForTheRetryTime() throws Exception {
        store.databaseDown = true;
        LoadRun run = run(5, 2, Duration.ofMillis(100), new AtomicBoolean());
        LoadRun.Outcome outcome = run.run(plan(1000), Long.MAX_VALUE, stats);
        assertThat(outcome).isEqualTo(LoadRun.Outcome.DATABASE_UNAVAILABLE);
        assertThat(run.databaseError()).contains("connection refused");
        assertThat(stats.loaded()).isZero();
        assertThat(store.batches.stream().distinct().count()).as("batches tried before giving up").isLessThan(10);
    }

    @Test
    void waitsOutAShortOutage() throws Exception {
        store.databaseDown = true;
        Thread repair = new Thread(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException ignored) {
                // test thread
            }
            store.databaseDown = false;
        });
        repair.start();
        LoadRun.Outcome outcome = run(5, 2, SECOND, new AtomicBoolean()).run(plan(20), Long.MAX_VALUE, stats);
        repair.join();
        assertThat(outcome).isEqualTo(LoadRun.Outcome.COMPLETE);
        assertThat(stats.loaded()).isEqualTo(20);
        assertThat(stats.failed()).isZero();
    }

    @Test
    void stopsTakingBatchesWhenToldTo() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        batchSize = 1;
        List<Batch> plan = plan(10);
        FakeStore stopsAfterTwo = new FakeStore() {
            @Override
            public BatchResult importBatch(Batch batch) {
                if (batches.size() == 1) {
                    stop.set(true); // e.g. the topology changed while the second batch ran
                }
                return super.importBatch(batch);
            }
        };
        stopsAfterTwo.database.addAll(store.database);
        LoadRun.Outcome outcome = new LoadRun(stopsAfterTwo, 1, new Retry(SECOND, stop::get), new RateLimit(0, System::nanoTime),
                fullSpeed(1), new RevocationGuard(stopsAfterTwo, Duration.ZERO), row -> { }, stop::get)
                .run(plan, Long.MAX_VALUE, stats);

        assertThat(outcome).isEqualTo(LoadRun.Outcome.STOPPED);
        assertThat(stopsAfterTwo.batches).hasSize(2);
    }

    @Test
    void stopsAtTheClientSessionLimit() throws Exception {
        LoadRun.Outcome outcome = run(2, 1, SECOND, new AtomicBoolean()).run(plan(10), 4, stats);
        assertThat(outcome).isEqualTo(LoadRun.Outcome.CAPACITY);
        assertThat(stats.clientSessions()).isEqualTo(4);
        assertThat(store.cache).hasSize(4);
    }

    @Test
    void addsIntoTheLifetimeCounters() throws Exception {
        LoadStats lifetime = new LoadStats(null);
        LoadStats pass = new LoadStats(lifetime);
        run(10, 2, SECOND, new AtomicBoolean()).run(plan(7), Long.MAX_VALUE, pass);
        assertThat(lifetime.loaded()).isEqualTo(7);
    }
}
