package dev.offlinepreload.keycloak;

import static dev.offlinepreload.keycloak.TestCluster.CLIENT_SESSIONS;
import static dev.offlinepreload.keycloak.TestCluster.EXPIRY;
import static dev.offlinepreload.keycloak.TestCluster.SESSIONS;
import static dev.offlinepreload.keycloak.TestCluster.TIMEOUT;
import static dev.offlinepreload.keycloak.TestCluster.await;
import static dev.offlinepreload.keycloak.TestCluster.clientKey;
import static dev.offlinepreload.keycloak.TestCluster.clientSession;
import static dev.offlinepreload.keycloak.TestCluster.clientSessions;
import static dev.offlinepreload.keycloak.TestCluster.offlineCaches;
import static dev.offlinepreload.keycloak.TestCluster.oneSessionPerSegmentOwnedBy;
import static dev.offlinepreload.keycloak.TestCluster.owns;
import static dev.offlinepreload.keycloak.TestCluster.sessions;
import static dev.offlinepreload.keycloak.TestCluster.strays;
import static dev.offlinepreload.keycloak.TestCluster.topology;
import static dev.offlinepreload.keycloak.TestCluster.userSession;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.keycloak.ContainerWriter.Outcome;
import org.infinispan.commons.time.DefaultTimeService;
import org.infinispan.commons.time.TimeService;
import org.infinispan.factories.ComponentRegistry;
import org.infinispan.factories.GlobalComponentRegistry;
import org.infinispan.factories.impl.BasicComponentRegistry;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.statetransfer.StateTransferLockImpl;
import org.infinispan.topology.CacheTopology;
import org.infinispan.topology.LocalTopologyManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.keycloak.models.sessions.infinispan.entities.EmbeddedClientSessionKey;

/**
 * {@link ContainerWriter} while a third member joins a cluster of two and takes segments from them: Keycloak's offline
 * caches transfer no state, so a segment that moves leaves its entries behind on the old owner, which drops them when
 * the rebalance ends. A write must never outlive its segment there, and nothing a member still owns may go missing.
 */
class ClusteredRebalanceTest {

    private TestCluster cluster;

    @BeforeEach
    void startCluster() {
        cluster = TestCluster.start(2);
    }

    @AfterEach
    void stopCluster() {
        cluster.close();
    }

    /**
     * One write into every segment A owns, each held after its ownership check, before its write (where the writer
     * reads the clock), while C joins: A installs no topology of the rebalance until the writes are done, and the
     * rebalance's end then removes those of segments that moved to C.
     */
    @Test
    void aRebalanceWaitsForWritesBetweenTheirOwnershipCheckAndTheirWrite() throws Exception {
        DefaultCacheManager a = cluster.member(0);
        HoldingClock clock = HoldingClock.installOn(a);
        OfflineCaches caches = offlineCaches(a); // built after the clock is in place: its writers read it
        List<String> ids = oneSessionPerSegmentOwnedBy(a, "held");
        int topologyBefore = topology(a, SESSIONS).getTopologyId();

        ExecutorService writers = Executors.newFixedThreadPool(ids.size());
        try {
            List<Future<Outcome>> outcomes = new ArrayList<>();
            for (String id : ids) {
                outcomes.add(writers.submit(() -> clock.holding(
                        () -> caches.putIfAbsent(id, userSession(id), EXPIRY).outcome())));
            }
            clock.awaitHeld(ids.size());

            DefaultCacheManager c = cluster.startMember();
            CompletableFuture<Void> joined = CompletableFuture.runAsync(() -> TestCluster.startCaches(c));
            await().until(() -> topologyInstallWaitsForTheLock() || rebalanceEnded(a, 3));
            assertThat(topology(a, SESSIONS).getTopologyId()).as("A installed a topology while writes were between their "
                    + "ownership check and their write").isEqualTo(topologyBefore);

            clock.release();
            for (Future<Outcome> outcome : outcomes) {
                assertThat(outcome.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("checked against the old topology")
                        .isEqualTo(Outcome.PUT);
            }
            joined.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            cluster.awaitSettled();
        } finally {
            clock.release();
            writers.shutdownNow();
        }

        List<String> moved = ids.stream().filter(id -> !owns(a, id)).toList();
        assertThat(moved).as("C took some of A's segments").isNotEmpty();
        for (DefaultCacheManager member : cluster.members()) {
            assertThat(strays(member, SESSIONS)).as("entries on %s of segments it does not own", member.getAddress()).isEmpty();
        }
        for (String id : ids) {
            for (DefaultCacheManager member : cluster.members()) {
                assertThat(sessions(member).get(id) != null).as("%s read from %s (%s)", id, member.getAddress(),
                        moved.contains(id) ? "moved to C without state transfer" : "A kept its segment").isEqualTo(!moved.contains(id));
            }
        }
    }

    /**
     * A and B load what they planned before C joined, paced, through the join and on after it: a write whose segment
     * has moved by then is not owned; what was put stays readable from every member where its writer kept the segment,
     * and is gone everywhere where the segment moved (no state transfer: a request reloads it from the database).
     */
    @Test
    void writesWhileAThirdMemberJoinsStayWhereTheirSegmentStaysAndNowhereElse() throws Exception {
        record Write(String id, DefaultCacheManager writer, Outcome session, boolean clientSessionPut) {
        }
        Queue<Write> writes = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean settled = new AtomicBoolean();
        Map<DefaultCacheManager, AtomicInteger> writtenSinceSettled = new ConcurrentHashMap<>();
        List<DefaultCacheManager> loaders = cluster.members();
        ExecutorService writers = Executors.newFixedThreadPool(loaders.size());
        try {
            List<Future<?>> running = new ArrayList<>();
            for (DefaultCacheManager loader : loaders) {
                OfflineCaches caches = offlineCaches(loader);
                TopologySnapshot plan = caches.topology();
                AtomicInteger afterSettled = writtenSinceSettled.computeIfAbsent(loader, m -> new AtomicInteger());
                running.add(writers.submit(() -> {
                    for (int i = 0; !stop.get(); i++) {
                        String id = loader.getAddress() + "-" + i;
                        if (!plan.owns().test(id)) {
                            continue;
                        }
                        boolean wasSettled = settled.get();
                        Outcome session = caches.putIfAbsent(id, userSession(id, "app-1"), EXPIRY).outcome();
                        // as BatchImport does: client sessions only for a session it put
                        boolean clientSession = session == Outcome.PUT
                                && caches.putIfAbsent(clientKey(id, "app-1"), clientSession(id, "app-1"), EXPIRY);
                        writes.add(new Write(id, loader, session, clientSession));
                        if (wasSettled) {
                            afterSettled.incrementAndGet();
                        }
                        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200)); // a rate-limited loader
                    }
                }));
            }
            await().until(() -> writes.size() >= 100);
            TestCluster.startCaches(cluster.startMember());
            cluster.awaitSettled();
            settled.set(true);
            await().until(() -> writtenSinceSettled.values().stream().allMatch(n -> n.get() >= 50));
            stop.set(true);
            for (Future<?> writer : running) {
                writer.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            writers.shutdownNow();
        }

        for (DefaultCacheManager member : cluster.members()) {
            assertThat(strays(member, SESSIONS)).as("sessions on %s of segments it does not own", member.getAddress()).isEmpty();
            assertThat(strays(member, CLIENT_SESSIONS)).as("client sessions on %s of segments it does not own", member.getAddress())
                    .isEmpty();
        }
        assertThat(writes).as("writes planned before the join whose segment had moved").anyMatch(w -> w.session() == Outcome.NOT_OWNED);
        Set<String> ids = writes.stream().map(Write::id).collect(Collectors.toSet());
        Set<EmbeddedClientSessionKey> clientKeys = ids.stream().map(id -> clientKey(id, "app-1")).collect(Collectors.toSet());
        List<String> wrong = new ArrayList<>();
        for (DefaultCacheManager reader : cluster.members()) {
            Set<String> sessionsRead = sessions(reader).getAll(ids).keySet();
            Set<EmbeddedClientSessionKey> clientSessionsRead = clientSessions(reader).getAll(clientKeys).keySet();
            for (Write w : writes) {
                boolean sessionKept = w.session() == Outcome.PUT && owns(w.writer(), w.id());
                boolean clientSessionKept = w.clientSessionPut()
                        && topology(w.writer(), CLIENT_SESSIONS).getDistribution(clientKey(w.id(), "app-1")).isPrimary();
                if (sessionsRead.contains(w.id()) != sessionKept
                        || clientSessionsRead.contains(clientKey(w.id(), "app-1")) != clientSessionKept) {
                    wrong.add(w + " read from " + reader.getAddress() + ": session " + sessionsRead.contains(w.id())
                            + ", client session " + clientSessionsRead.contains(clientKey(w.id(), "app-1")));
                }
            }
        }
        assertThat(wrong).as("read otherwise than kept, of %d writes", writes.size()).isEmpty();
    }

    /** Whether A has handled the rebalance's end: its stable topology of the sessions cache has all members. */
    private static boolean rebalanceEnded(DefaultCacheManager member, int members) {
        CacheTopology stable = GlobalComponentRegistry.componentOf(member, LocalTopologyManager.class).getStableCacheTopology(SESSIONS);
        return stable != null && stable.getMembers().size() == members && stable.getTopologyId() == topology(member, SESSIONS).getTopologyId();
    }

    /** Whether some thread waits to install a topology: for the exclusive topology lock, which shared holders keep. */
    private static boolean topologyInstallWaitsForTheLock() {
        return Thread.getAllStackTraces().values().stream().flatMap(Arrays::stream).anyMatch(frame ->
                frame.getClassName().equals(StateTransferLockImpl.class.getName())
                        && frame.getMethodName().equals("acquireExclusiveTopologyLock"));
    }

    /**
     * The member's clock, as {@link ContainerWriter} reads it between its ownership check and its write (under the
     * shared topology lock): holds a thread there on its first reading inside {@link #holding}. It replaces the
     * clock in the sessions cache's component registry only, for components looked up after that (the cache's own
     * already have theirs).
     */
    private static final class HoldingClock extends DefaultTimeService {

        private final Set<Thread> toHold = ConcurrentHashMap.newKeySet();
        private final AtomicInteger held = new AtomicInteger();
        private final CountDownLatch released = new CountDownLatch(1);

        static HoldingClock installOn(DefaultCacheManager member) {
            HoldingClock clock = new HoldingClock();
            ComponentRegistry.componentOf(sessions(member), BasicComponentRegistry.class)
                    .replaceComponent(TimeService.class.getName(), clock, false);
            return clock;
        }

        <T> T holding(Supplier<T> write) {
            toHold.add(Thread.currentThread());
            try {
                return write.get();
            } finally {
                toHold.remove(Thread.currentThread());
            }
        }

        @Override
        public long wallClockTime() {
            if (toHold.remove(Thread.currentThread())) {
                held.incrementAndGet();
                try {
                    if (!released.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                        throw new IllegalStateException("held for longer than " + TIMEOUT);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            return super.wallClockTime();
        }

        void awaitHeld(int threads) {
            await().until(() -> held.get() == threads);
        }

        void release() {
            released.countDown();
        }
    }
}
