package dev.offlinepreload;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import dev.offlinepreload.cluster.ClusterStart;
import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.load.BatchResult;
import dev.offlinepreload.load.ImportedSession;
import dev.offlinepreload.load.RequestWatch;
import dev.offlinepreload.load.SessionCount;
import dev.offlinepreload.load.SessionStore;
import dev.offlinepreload.plan.Batch;
import dev.offlinepreload.plan.Candidate;

/**
 * A {@link SessionStore} for the coordinator's tests. The "database" maps session ids to their last refresh (every
 * session has {@link #clientSessionsPerSession} client sessions), the "cache" is a set of ids, the topology is whatever the test sets. Hooks run
 * inside the n-th {@link #importBatch} call, so a test can move the topology, take the database down or block a
 * batch while a load is running.
 */
final class FakeSessionStore implements SessionStore {

    static final String NODE = "node1";

    /** id -> lastRefresh; sorted, so candidates stream in key order like the database's. */
    final Map<String, Integer> database = new ConcurrentSkipListMap<>();
    final Set<String> cache = ConcurrentHashMap.newKeySet();
    /** Client sessions ("client-N-id") the cache dropped though their session's entry stayed. */
    final Set<String> droppedClientSessions = ConcurrentHashMap.newKeySet();
    final AtomicReference<TopologySnapshot> topology = new AtomicReference<>(snapshot(1, 1, id -> true));
    /** Every database call fails while set. */
    volatile boolean databaseDown;
    /** countSessions fails while set (the load itself does not). */
    volatile boolean countFails;
    /** countSessions waits (at most 5 s, then fails) until a key stream has begun, while set. */
    volatile boolean countWaitsForKeys;
    final CountDownLatch keysStreaming = new CountDownLatch(1);
    volatile long sessionsMaxCount = -1;
    volatile long clientSessionsMaxCount = -1;
    volatile int clientSessionsPerSession = 1;

    /** importBatch calls, failed ones included. */
    final AtomicInteger importCalls = new AtomicInteger();
    /** forEachKey calls (one per plan), failed ones included. */
    final AtomicInteger planCalls = new AtomicInteger();
    final AtomicInteger topologyCalls = new AtomicInteger();
    /** countSessions calls (one per completed pass), failed ones included. */
    final AtomicInteger countCalls = new AtomicInteger();
    /** The ids of every importBatch call, in call order, failed ones included. */
    final List<List<String>> requestedBatches = Collections.synchronizedList(new ArrayList<>());
    /** Ids importBatch put into the cache, in order. */
    final List<String> imported = Collections.synchronizedList(new ArrayList<>());
    final List<String> evicted = Collections.synchronizedList(new ArrayList<>());
    /** Sessions a "logout" removed through the cache: the coordinator's removal window reports them. */
    final Set<String> removedThroughCache = ConcurrentHashMap.newKeySet();
    final AtomicInteger removalWindowsClosed = new AtomicInteger();
    /** Run inside the importBatch call with this (1-based) number, before it reads the "database". */
    final Map<Integer, Runnable> importHooks = new ConcurrentHashMap<>();
    /** Run inside each missingClientSessions call: the check after a pass. */
    volatile Runnable checkHook = () -> { };
    /** Run inside each forEachKey call before it streams, e.g. to hang like a statement on a paused database. */
    volatile Runnable keysHook = () -> { };
    /** Run inside each topology call: what happens as the coordinator looks at the cluster. */
    volatile Runnable topologyHook = () -> { };
    /** Whether opening a removal window fails (a pass that fails before it loads anything). */
    volatile boolean removalWatchFails;
    /** Threads that planned (the coordinator's), counted, and imported (the workers). */
    final Set<Thread> planningThreads = ConcurrentHashMap.newKeySet();
    final Set<Thread> countingThreads = ConcurrentHashMap.newKeySet();
    final Set<Thread> workerThreads = ConcurrentHashMap.newKeySet();

    /** A stable topology with members node1..nodeN. */
    static TopologySnapshot snapshot(long id, int members, Predicate<String> owns) {
        return new TopologySnapshot(id, true, IntStream.rangeClosed(1, members).mapToObj(i -> "node" + i).toList(), owns,
                1.0 / members);
    }

    /** Puts {@code count} sessions s000, s001, ... into the database. */
    FakeSessionStore withSessions(int count) {
        for (int i = 0; i < count; i++) {
            database.put(id(i), 1_000 + i);
        }
        return this;
    }

    /**
     * Blocks until {@code release} opens, ignoring interrupts as a JDBC read does (it ends only when its timeout
     * fires), then fails like the timed-out statement.
     */
    static void hangUninterruptibly(CountDownLatch entered, CountDownLatch release) {
        returnUninterruptibly(entered, release);
        throw new IllegalStateException("statement timed out");
    }

    /** A statement that ignores interrupts until {@code release} and then returns its result, interrupt flag kept. */
    static void returnUninterruptibly(CountDownLatch entered, CountDownLatch release) {
        entered.countDown();
        boolean interrupted = false;
        while (release.getCount() > 0) {
            try {
                release.await();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    static String id(int i) {
        return String.format("s%03d", i);
    }

    static int number(String id) {
        return Integer.parseInt(id.substring(1));
    }

    void moveTo(long id, int members, Predicate<String> owns) {
        topology.set(snapshot(id, members, owns));
    }

    @Override
    public String nodeName() {
        return NODE;
    }

    /** "persistent", or "volatile": then the hot tier has a stage of its own. */
    volatile String sessionMode = "persistent";

    @Override
    public String sessionMode() {
        return sessionMode;
    }

    /** Requests at work, as the governor sees them. */
    volatile int busyRequests;
    /** Requests that finished slow since the last look, as the governor sees them: a node behind its traffic. */
    volatile int slowRequests;
    /** Requests that began so far, however short they were ({@link #arrived()}). */
    private final AtomicLong arrivals = new AtomicLong();

    /**
     * A request that begins and ends between two looks: seen at the next look of every watch that existed when it
     * arrived, as Keycloak's request counter does (each watch its own view).
     */
    void arrived() {
        arrivals.incrementAndGet();
    }

    @Override
    public RequestWatch newRequestWatch() {
        return new RequestWatch() {
            private long seen = arrivals.get();

            @Override
            public int busy() {
                long now = arrivals.get();
                boolean began = now != seen;
                seen = now;
                return Math.max(busyRequests, began ? 1 : 0);
            }

            @Override
            public int slow() {
                return slowRequests;
            }

            @Override
            public Finished finished() {
                return Finished.NONE;
            }
        };
    }

    /** Whether every member has started, as the quiet start and the governor ask. */
    volatile boolean allStarted = true;
    /** How often the cluster was asked whether it has started. */
    final AtomicInteger startedCalls = new AtomicInteger();

    @Override
    public ClusterStart clusterStart(int expectedMembers) {
        startedCalls.incrementAndGet();
        if (topology.get().members().size() < expectedMembers) {
            return ClusterStart.FORMING;
        }
        return allStarted ? ClusterStart.STARTED : ClusterStart.JOINED;
    }

    @Override
    public TopologySnapshot topology() {
        topologyCalls.incrementAndGet();
        topologyHook.run();
        return topology.get();
    }

    @Override
    public boolean isCached(String userSessionId) {
        return cache.contains(userSessionId) && droppedClientSessions.stream().noneMatch(c -> c.endsWith("-" + userSessionId));
    }

    @Override
    public int missingClientSessions(ImportedSession session) {
        checkHook.run();
        return (int) session.clientIds().stream().filter(droppedClientSessions::contains).count();
    }

    @Override
    public RemovalWindow watchRemovals() {
        if (removalWatchFails) {
            throw new IllegalStateException("the removal listener could not be added");
        }
        return new RemovalWindow() {
            @Override
            public boolean removed(String userSessionId) {
                return removedThroughCache.contains(userSessionId);
            }

            @Override
            public void close() {
                removalWindowsClosed.incrementAndGet();
            }
        };
    }

    @Override
    public long sessionsMaxCount() {
        return sessionsMaxCount;
    }

    @Override
    public long clientSessionsMaxCount() {
        return clientSessionsMaxCount;
    }

    @Override
    public long localClientSessions() {
        return (long) cache.size() * clientSessionsPerSession;
    }

    @Override
    public void forEachKey(Consumer<String> sink) {
        planCalls.incrementAndGet();
        planningThreads.add(Thread.currentThread());
        failIfDown();
        keysHook.run();
        keysStreaming.countDown();
        database.keySet().forEach(sink);
    }

    @Override
    public void forEachCandidate(Consumer<Candidate> sink) {
        planningThreads.add(Thread.currentThread());
        failIfDown();
        database.forEach((id, lastRefresh) -> sink.accept(new Candidate(id, lastRefresh)));
    }

    /** Sessions refreshed at or after this are the hot tier ({@link #forEachRecent}); by default none. */
    volatile int hotSince = Integer.MAX_VALUE;

    /** forEachRecent calls. */
    final AtomicInteger recentCalls = new AtomicInteger();

    @Override
    public void forEachRecent(Duration window, Consumer<Candidate> sink) {
        recentCalls.incrementAndGet();
        failIfDown();
        database.forEach((id, lastRefresh) -> {
            if (lastRefresh >= hotSince) {
                sink.accept(new Candidate(id, lastRefresh));
            }
        });
    }

    @Override
    public SessionCount countSessions() {
        countCalls.incrementAndGet();
        countingThreads.add(Thread.currentThread());
        failIfDown();
        if (countFails) {
            throw new IllegalStateException("statement timeout");
        }
        try {
            if (countWaitsForKeys && !keysStreaming.await(5, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no key stream began while counting");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return new SessionCount(database.size(), (long) database.size() * clientSessionsPerSession);
    }

    @Override
    public BatchResult importBatch(Batch batch) {
        int call = importCalls.incrementAndGet();
        workerThreads.add(Thread.currentThread());
        requestedBatches.add(batch.ids());
        Runnable hook = importHooks.get(call);
        if (hook != null) {
            hook.run();
        }
        failIfDown();
        List<ImportedSession> sessions = new ArrayList<>();
        long gone = 0;
        for (String id : batch.ids()) {
            if (database.containsKey(id)) {
                cache.add(id);
                droppedClientSessions.removeIf(c -> c.endsWith("-" + id));
                imported.add(id);
                sessions.add(new ImportedSession(id, IntStream.range(0, clientSessionsPerSession)
                        .mapToObj(c -> "client-" + c + "-" + id).toList()));
            } else {
                gone++;
            }
        }
        return new BatchResult(sessions, (long) sessions.size() * clientSessionsPerSession, 0, 0, 0, gone, List.of(), 0);
    }

    @Override
    public int removeDeleted(Batch batch, List<ImportedSession> sessions) {
        failIfDown();
        int removed = 0;
        for (ImportedSession s : sessions) {
            if (!database.containsKey(s.id()) && cache.remove(s.id())) {
                removed++;
            }
        }
        return removed;
    }

    @Override
    public void evict(List<ImportedSession> sessions) {
        for (ImportedSession s : sessions) {
            cache.remove(s.id());
            evicted.add(s.id());
        }
    }

    private void failIfDown() {
        if (databaseDown) {
            throw new IllegalStateException("connection refused");
        }
    }
}
