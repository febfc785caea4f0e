package dev.offlinepreload.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.offlinepreload.cluster.ClusterStart;
import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.plan.Batch;
import dev.offlinepreload.plan.Candidate;

/** A store whose "database" is a set of ids; every imported session has one client session. */
class FakeStore implements SessionStore {

    final Set<String> database = ConcurrentHashMap.newKeySet();
    final Set<String> cache = ConcurrentHashMap.newKeySet();
    final List<List<String>> batches = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger failuresLeft = new AtomicInteger();
    /** The names of the threads that imported batches. */
    final Set<String> importingThreads = ConcurrentHashMap.newKeySet();
    volatile boolean databaseDown;
    /** A batch containing this id always fails, whatever the database does. */
    volatile String poison;
    /** The requests at work, as the revocation check counts them. */
    volatile int requestsAtWork;
    /** The slow requests the revocation check sees finish at every look (a node behind its traffic). */
    volatile int slowRequests;
    /** How long each revocation check takes. */
    volatile long checkMillis;
    /** When each revocation check began and ended (nanoTime pairs), and how many ran at once at most. */
    final List<long[]> checkTimes = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger checksRunning = new AtomicInteger();
    final AtomicInteger mostChecksAtOnce = new AtomicInteger();

    @Override
    public String nodeName() {
        return "node1";
    }

    @Override
    public String sessionMode() {
        return "persistent";
    }

    @Override
    public RequestWatch newRequestWatch() {
        return new RequestWatch() {
            @Override
            public int busy() {
                return requestsAtWork;
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

    @Override
    public ClusterStart clusterStart(int expectedMembers) {
        return ClusterStart.STARTED;
    }

    @Override
    public TopologySnapshot topology() {
        return new TopologySnapshot(1, true, List.of("node1"), id -> true, 1);
    }

    @Override
    public RemovalWindow watchRemovals() {
        return new RemovalWindow() {
            @Override
            public boolean removed(String userSessionId) {
                return false;
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public boolean isCached(String userSessionId) {
        return cache.contains(userSessionId);
    }

    @Override
    public int missingClientSessions(ImportedSession session) {
        return 0;
    }

    @Override
    public long sessionsMaxCount() {
        return -1;
    }

    @Override
    public long clientSessionsMaxCount() {
        return -1;
    }

    @Override
    public long localClientSessions() {
        return cache.size();
    }

    @Override
    public void forEachKey(Consumer<String> sink) {
        database.stream().sorted().forEach(sink);
    }

    @Override
    public void forEachCandidate(Consumer<Candidate> sink) {
        database.stream().sorted().forEach(id -> sink.accept(new Candidate(id, 1)));
    }

    @Override
    public void forEachRecent(Duration window, Consumer<Candidate> sink) {
        // no hot tier: the tests here are about the run, not the order
    }

    @Override
    public SessionCount countSessions() {
        return new SessionCount(database.size(), database.size());
    }

    @Override
    public BatchResult importBatch(Batch batch) {
        batches.add(batch.ids());
        importingThreads.add(Thread.currentThread().getName());
        if (databaseDown || failuresLeft.getAndDecrement() > 0 || (poison != null && batch.ids().contains(poison))) {
            throw new IllegalStateException("connection refused");
        }
        List<ImportedSession> imported = new ArrayList<>();
        long gone = 0;
        for (String id : batch.ids()) {
            if (database.contains(id)) {
                cache.add(id);
                imported.add(new ImportedSession(id, List.of("client")));
            } else {
                gone++;
            }
        }
        return new BatchResult(imported, imported.size(), 0, 0, 0, gone, List.of(), 0);
    }

    @Override
    public int removeDeleted(Batch batch, List<ImportedSession> imported) {
        long began = System.nanoTime();
        mostChecksAtOnce.accumulateAndGet(checksRunning.incrementAndGet(), Math::max);
        try {
            Thread.sleep(checkMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            checksRunning.decrementAndGet();
            checkTimes.add(new long[] {began, System.nanoTime()});
        }
        if (databaseDown) {
            throw new IllegalStateException("connection refused");
        }
        int removed = 0;
        for (ImportedSession s : imported) {
            if (!database.contains(s.id()) && cache.remove(s.id())) {
                removed++;
            }
        }
        return removed;
    }

    @Override
    public void evict(List<ImportedSession> sessions) {
        sessions.forEach(s -> cache.remove(s.id()));
    }
}
