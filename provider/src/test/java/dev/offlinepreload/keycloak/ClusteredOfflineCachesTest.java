package dev.offlinepreload.keycloak;

import static dev.offlinepreload.keycloak.TestCluster.CLIENT_SESSIONS;
import static dev.offlinepreload.keycloak.TestCluster.EXPIRY;
import static dev.offlinepreload.keycloak.TestCluster.SESSIONS;
import static dev.offlinepreload.keycloak.TestCluster.clientKey;
import static dev.offlinepreload.keycloak.TestCluster.clientSession;
import static dev.offlinepreload.keycloak.TestCluster.clientSessions;
import static dev.offlinepreload.keycloak.TestCluster.holds;
import static dev.offlinepreload.keycloak.TestCluster.offlineCaches;
import static dev.offlinepreload.keycloak.TestCluster.owns;
import static dev.offlinepreload.keycloak.TestCluster.sessionOwnedBy;
import static dev.offlinepreload.keycloak.TestCluster.sessions;
import static dev.offlinepreload.keycloak.TestCluster.userSession;
import static dev.offlinepreload.keycloak.TestCluster.version;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.keycloak.ContainerWriter.Outcome;
import dev.offlinepreload.keycloak.KeycloakMinor.EntryExpiry;
import dev.offlinepreload.load.ImportedSession;
import dev.offlinepreload.plan.Batch;
import jakarta.persistence.EntityManager;
import org.hibernate.Session;
import org.hibernate.jdbc.Work;
import org.infinispan.manager.DefaultCacheManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.keycloak.models.sessions.infinispan.changes.SessionEntityWrapper;
import org.keycloak.models.sessions.infinispan.entities.UserSessionEntity;

/**
 * The loader's cache side ({@link OfflineCaches} and its {@link ContainerWriter}s, as {@code BatchImport} uses them;
 * {@link DeletedSessionSweep}; {@link RemovalWatch}) on real distributed caches of two members, A and B, configured as
 * Keycloak's offline caches. A is the loading node throughout; "a request on B" is the cache API used on B.
 */
class ClusteredOfflineCachesTest {

    private static TestCluster cluster;
    private static DefaultCacheManager a;
    private static DefaultCacheManager b;

    @BeforeAll
    static void startCluster() {
        cluster = TestCluster.start(2);
        a = cluster.member(0);
        b = cluster.member(1);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void keycloaksGrouperIsReadFromTheCacheConfiguration() {
        assertThat(OfflineCaches.groupsClientSessions(clientSessions(a))).isTrue();
        assertThat(offlineCaches(a).clientSessionsGrouped()).isTrue();
    }

    @Test
    void aSessionThisMemberOwnsIsWrittenIntoItsOwnContainerAndTheOtherMemberReadsIt() {
        String id = sessionOwnedBy(a, "owned");
        OfflineCaches caches = offlineCaches(a);
        SessionEntityWrapper<UserSessionEntity> loaded = userSession(id, "app-1");

        assertThat(caches.putIfAbsent(id, loaded, EXPIRY).outcome()).isEqualTo(Outcome.PUT);
        assertThat(caches.putIfAbsent(clientKey(id, "app-1"), clientSession(id, "app-1"), EXPIRY)).isTrue();

        assertThat(holds(a, SESSIONS, id)).isTrue();
        assertThat(holds(a, CLIENT_SESSIONS, clientKey(id, "app-1"))).as("in its user session's segment, so A's too").isTrue();
        assertThat(holds(b, SESSIONS, id)).isFalse();
        assertThat(holds(b, CLIENT_SESSIONS, clientKey(id, "app-1"))).isFalse();
        assertThat(caches.isCached(id)).isTrue();

        // B reads through the cache API: a remote get from the owner, the entry marshalled with Keycloak's schemas
        var read = sessions(b).getCacheEntry(id);
        assertThat(read).as("B reads A's entry").isNotNull();
        assertThat(version(read.getValue())).isEqualTo(version(loaded));
        assertThat(read.getValue().getEntity().getUser()).isEqualTo("user-" + id);
        assertThat(read.getValue().getEntity().getClientSessions()).containsExactly("app-1");
        assertThat(read.getLifespan()).isEqualTo(EXPIRY.lifespanMs());
        assertThat(read.getMaxIdle()).isEqualTo(-1);
        assertThat(clientSessions(b).get(clientKey(id, "app-1")).getEntity().getClientId()).isEqualTo("app-1");
    }

    /** Keycloak before 26.6 puts a persistent-mode entry with its lifespan and its max-idle; the loader does the same there. */
    @Test
    void anEntryOfAMinorBefore26_6KeepsItsLifespanAndMaxIdle() {
        String id = sessionOwnedBy(a, "max-idle");
        EntryExpiry both = KeycloakMinor.of("26.5.6").expiry(60_000, 30_000);

        assertThat(offlineCaches(a).putIfAbsent(id, userSession(id, "app-1"), both).outcome()).isEqualTo(Outcome.PUT);

        var read = sessions(b).getCacheEntry(id);
        assertThat(read.getLifespan()).isEqualTo(60_000);
        assertThat(read.getMaxIdle()).isEqualTo(30_000);
    }

    @Test
    void aSessionTheOtherMemberOwnsIsNotWrittenHereAndTheOwnersEntryStaysAsItWas() {
        OfflineCaches caches = offlineCaches(a);

        // B cached it first (a request there): A's put does not touch it, and does not call it present either
        String cachedThere = sessionOwnedBy(b, "theirs-cached");
        SessionEntityWrapper<UserSessionEntity> request = userSession(cachedThere, "app-1");
        sessions(b).put(cachedThere, request);
        var result = caches.putIfAbsent(cachedThere, userSession(cachedThere, "app-1"), EXPIRY);
        assertThat(result.outcome()).isEqualTo(Outcome.NOT_OWNED);
        assertThat(result.present()).isNull();
        assertThat(holds(a, SESSIONS, cachedThere)).isFalse();
        assertThat(version(sessions(a).get(cachedThere))).isEqualTo(version(request));
        assertThat(version(sessions(b).get(cachedThere))).isEqualTo(version(request));

        // Nobody cached it: A writes neither the session nor its client session, anywhere ...
        String notCached = sessionOwnedBy(b, "theirs");
        assertThat(caches.putIfAbsent(notCached, userSession(notCached, "app-1"), EXPIRY).outcome())
                .isEqualTo(Outcome.NOT_OWNED);
        assertThat(caches.putIfAbsent(clientKey(notCached, "app-1"), clientSession(notCached, "app-1"), EXPIRY))
                .as("the client session lives in its user session's segment: B's too").isFalse();
        assertThat(holds(a, SESSIONS, notCached)).isFalse();
        assertThat(holds(a, CLIENT_SESSIONS, clientKey(notCached, "app-1"))).isFalse();
        assertThat(sessions(a).get(notCached)).isNull();
        assertThat(sessions(b).get(notCached)).isNull();
        assertThat(caches.session(notCached)).isNull();

        // ... and nothing is lost: the owner's own loader puts it, and A reads it from there
        OfflineCaches owner = offlineCaches(b);
        SessionEntityWrapper<UserSessionEntity> loaded = userSession(notCached, "app-1");
        assertThat(owner.putIfAbsent(notCached, loaded, EXPIRY).outcome()).isEqualTo(Outcome.PUT);
        assertThat(owner.putIfAbsent(clientKey(notCached, "app-1"), clientSession(notCached, "app-1"), EXPIRY)).isTrue();
        assertThat(version(sessions(a).get(notCached))).isEqualTo(version(loaded));
        assertThat(clientSessions(a).get(clientKey(notCached, "app-1"))).isNotNull();
    }

    @Test
    void whatARequestOnTheOtherMemberCachedFirstIsPresentOnTheOwnerAndStays() {
        String id = sessionOwnedBy(a, "requested");
        SessionEntityWrapper<UserSessionEntity> request = userSession(id, "app-1");
        var requestClient = clientSession(id, "app-1");
        sessions(b).put(id, request); // written on A, the owner
        clientSessions(b).put(clientKey(id, "app-1"), requestClient);

        OfflineCaches caches = offlineCaches(a);
        var result = caches.putIfAbsent(id, userSession(id, "app-1"), EXPIRY);
        assertThat(result.outcome()).isEqualTo(Outcome.PRESENT);
        assertThat(version(result.present())).isEqualTo(version(request));
        assertThat(caches.putIfAbsent(clientKey(id, "app-1"), clientSession(id, "app-1"), EXPIRY)).isFalse();
        assertThat(version(sessions(b).get(id))).isEqualTo(version(request));
        assertThat(version(clientSessions(b).get(clientKey(id, "app-1")))).isEqualTo(version(requestClient));
    }

    @Test
    void whoThePlanSaysOwnsASessionIsWhoWritesItAndItsClientSessions() {
        // The planner picks a node's sessions with the topology's owns(); the writer decides per cache, by segment.
        TopologySnapshot topologyOfA = offlineCaches(a).topology();
        TopologySnapshot topologyOfB = offlineCaches(b).topology();
        assertThat(topologyOfA.stable()).isTrue();
        assertThat(topologyOfA.members()).hasSize(2);
        int ownedByA = 0;
        for (int i = 0; i < 200; i++) {
            String id = "planned-" + i;
            boolean planned = topologyOfA.owns().test(id);
            assertThat(topologyOfB.owns().test(id)).as(id + ": exactly one member plans it").isNotEqualTo(planned);
            DefaultCacheManager writer = planned ? a : b;
            DefaultCacheManager other = planned ? b : a;
            assertThat(offlineCaches(other).putIfAbsent(id, userSession(id, "app-1"), EXPIRY).outcome())
                    .as(id).isEqualTo(Outcome.NOT_OWNED);
            assertThat(offlineCaches(other).putIfAbsent(clientKey(id, "app-1"), clientSession(id, "app-1"), EXPIRY))
                    .as(id).isFalse();
            assertThat(offlineCaches(writer).putIfAbsent(id, userSession(id, "app-1"), EXPIRY).outcome())
                    .as(id).isEqualTo(Outcome.PUT);
            assertThat(offlineCaches(writer).putIfAbsent(clientKey(id, "app-1"), clientSession(id, "app-1"), EXPIRY))
                    .as(id).isTrue();
            ownedByA += planned ? 1 : 0;
        }
        assertThat(ownedByA).as("both members own some").isBetween(1, 199);
    }

    @Test
    void aLogoutThroughTheOtherMemberIsSeenByTheOwnersRemovalWatchTheLoadersOwnEvictionIsNot() {
        RemovalWatch watch = new RemovalWatch();
        sessions(a).addListener(watch);
        clientSessions(a).addListener(watch);
        try {
            OfflineCaches caches = offlineCaches(a);
            String loggedOut = sessionOwnedBy(a, "logged-out");
            String evicted = sessionOwnedBy(a, "evicted");
            for (String id : List.of(loggedOut, evicted)) {
                caches.putIfAbsent(id, userSession(id, "app-1"), EXPIRY);
                caches.putIfAbsent(clientKey(id, "app-1"), clientSession(id, "app-1"), EXPIRY);
            }
            long mark = watch.mark();

            clientSessions(b).remove(clientKey(loggedOut, "app-1")); // a logout handled on B
            sessions(b).remove(loggedOut);
            assertThat(watch.removedSince(loggedOut, mark)).as("removed on A, the owner, where the watch listens").isTrue();
            assertThat(watch.removedSince(clientKey(loggedOut, "app-1"), mark)).isTrue();
            assertThat(holds(a, SESSIONS, loggedOut)).isFalse();

            caches.evict(List.of(new ImportedSession(evicted, List.of("app-1"))));
            assertThat(watch.removedSince(evicted, mark)).as("the loader's own removal").isFalse();
            assertThat(sessions(b).get(evicted)).as("gone for B too").isNull();
            assertThat(clientSessions(b).get(clientKey(evicted, "app-1"))).isNull();
            watch.release(mark);
        } finally {
            sessions(a).removeListener(watch);
            clientSessions(a).removeListener(watch);
        }
    }

    @Test
    void theSweepTakesOutWhatTheDatabaseLostFromTheOwnerForEveryMemberAndOnlyThat() throws SQLException {
        OfflineCaches caches = offlineCaches(a);
        String kept = sessionOwnedBy(a, "swept-kept");
        String deleted = sessionOwnedBy(a, "swept-deleted");
        String theirs = sessionOwnedBy(b, "swept-theirs");
        for (String id : List.of(kept, deleted)) {
            caches.putIfAbsent(id, userSession(id, "app-1", "app-2"), EXPIRY);
            caches.putIfAbsent(clientKey(id, "app-1"), clientSession(id, "app-1"), EXPIRY);
            caches.putIfAbsent(clientKey(id, "app-2"), clientSession(id, "app-2"), EXPIRY);
        }
        SessionEntityWrapper<UserSessionEntity> cachedOnB = userSession(theirs);
        sessions(b).put(theirs, cachedOnB); // e.g. the segment moved to B after A loaded it, and a request reloaded it there

        try (Connection db = DriverManager.getConnection("jdbc:h2:mem:sweep")) {
            try (Statement sql = db.createStatement()) {
                sql.execute("CREATE TABLE OFFLINE_USER_SESSION (USER_SESSION_ID VARCHAR(36), OFFLINE_FLAG VARCHAR(4),"
                        + " PRIMARY KEY (USER_SESSION_ID, OFFLINE_FLAG))");
                sql.execute("CREATE TABLE OFFLINE_CLIENT_SESSION (USER_SESSION_ID VARCHAR(36), CLIENT_ID VARCHAR(255),"
                        + " CLIENT_STORAGE_PROVIDER VARCHAR(36), EXTERNAL_CLIENT_ID VARCHAR(255), OFFLINE_FLAG VARCHAR(4))");
                // the database still has 'kept' with app-1's client session; app-2's and 'deleted' (and 'theirs') are gone
                sql.execute("INSERT INTO OFFLINE_USER_SESSION VALUES ('" + kept + "', '1')");
                sql.execute("INSERT INTO OFFLINE_CLIENT_SESSION VALUES ('" + kept + "', 'app-1', 'local', 'local', '1')");
            }
            List<ImportedSession> imported = List.of(new ImportedSession(kept, List.of("app-1", "app-2")),
                    new ImportedSession(deleted, List.of("app-1", "app-2")), new ImportedSession(theirs, List.of()));
            Batch batch = new Batch(List.of(deleted, kept, theirs), false);

            int removed = DeletedSessionSweep.sweep(entityManager(db), new SessionQueries(null, false, Duration.ofSeconds(10), "H2 JDBC Driver", KeycloakMinor.of("26.7.4")), caches, batch, imported);

            assertThat(removed).as("'deleted', kept's app-2 and 'theirs'").isEqualTo(3);
        }
        for (DefaultCacheManager member : List.of(a, b)) {
            assertThat(sessions(member).get(kept)).isNotNull();
            assertThat(clientSessions(member).get(clientKey(kept, "app-1"))).isNotNull();
            assertThat(clientSessions(member).get(clientKey(kept, "app-2"))).isNull();
            assertThat(sessions(member).get(deleted)).isNull();
            assertThat(clientSessions(member).get(clientKey(deleted, "app-1"))).isNull();
            assertThat(clientSessions(member).get(clientKey(deleted, "app-2"))).isNull();
            // A takes out what A holds: an entry B cached is B's, and A's removal does not reach it
            assertThat(version(sessions(member).get(theirs))).isEqualTo(version(cachedOnB));
        }
        assertThat(owns(b, theirs)).isTrue();
    }

    /** An EntityManager that is only good for what {@link SessionQueries} does with one: JDBC work on a connection. */
    private static EntityManager entityManager(Connection connection) {
        Session session = (Session) Proxy.newProxyInstance(Session.class.getClassLoader(), new Class<?>[] {Session.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("doWork")) {
                        ((Work) args[0]).execute(connection);
                        return null;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        return (EntityManager) Proxy.newProxyInstance(EntityManager.class.getClassLoader(), new Class<?>[] {EntityManager.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("unwrap") && args[0] == Session.class) {
                        return session;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }
}
