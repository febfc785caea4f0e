package dev.offlinepreload.keycloak;

import static dev.offlinepreload.keycloak.TestCluster.CLIENT_SESSIONS;
import static dev.offlinepreload.keycloak.TestCluster.EXPIRY;
import static dev.offlinepreload.keycloak.TestCluster.SESSIONS;
import static dev.offlinepreload.keycloak.TestCluster.clientKey;
import static dev.offlinepreload.keycloak.TestCluster.clientSession;
import static dev.offlinepreload.keycloak.TestCluster.clientSessions;
import static dev.offlinepreload.keycloak.TestCluster.holds;
import static dev.offlinepreload.keycloak.TestCluster.owns;
import static dev.offlinepreload.keycloak.TestCluster.topology;
import static dev.offlinepreload.keycloak.TestCluster.userSession;
import static org.assertj.core.api.Assertions.assertThat;

import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.keycloak.ContainerWriter.Outcome;
import org.infinispan.manager.DefaultCacheManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Keycloak 26.4's layout of the offline caches: no {@code ClientSessionKeyGrouper}, so a client session's key has an
 * owner of its own, on real distributed caches of two members configured as Keycloak's but without the grouper. There
 * every member reads every session and writes the keys it owns (docs/keycloak-minors.md, "26.4").
 */
class UngroupedClientSessionsTest {

    private static TestCluster cluster;
    private static DefaultCacheManager a;
    private static DefaultCacheManager b;

    @BeforeAll
    static void startCluster() {
        cluster = TestCluster.start(2, false);
        a = cluster.member(0);
        b = cluster.member(1);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    private static OfflineCaches caches(DefaultCacheManager member) {
        return TestCluster.offlineCaches(member);
    }

    private static boolean ownsClientKey(DefaultCacheManager member, String userSessionId, String clientId) {
        return topology(member, CLIENT_SESSIONS).getDistribution(clientKey(userSessionId, clientId)).isPrimary();
    }

    @Test
    void everyMemberPlansEverySessionAndMayPlanAsManyMoreAsItKeepsOnlyAShareOf() {
        TopologySnapshot topology = caches(a).topology();
        assertThat(topology.stable()).isTrue();
        for (int i = 0; i < 100; i++) {
            assertThat(topology.owns().test("any-" + i)).isTrue();
        }
        assertThat(topology.keptShare()).isStrictlyBetween(0.0, 1.0);
        assertThat(topology.planned(1000)).isGreaterThan(1000);
    }

    @Test
    void theLayoutIsReadFromTheCacheConfigurationWithoutTheGrouper() {
        assertThat(OfflineCaches.groupsClientSessions(clientSessions(a))).isFalse();
        assertThat(caches(a).clientSessionsGrouped()).isFalse();
    }

    @Test
    void ofASessionWhoseEntryIsAnotherMembersAMemberWritesExactlyTheClientSessionsWhoseKeysItOwns() {
        // a session of B's with one client session whose key A owns and one whose key B owns
        String id = null;
        String appOfA = null;
        String appOfB = null;
        for (int i = 0; id == null; i++) {
            String candidate = "split-" + i;
            if (!owns(b, candidate)) {
                continue;
            }
            String ofA = null;
            String ofB = null;
            for (int app = 0; app < 16 && (ofA == null || ofB == null); app++) {
                if (ownsClientKey(a, candidate, "app-" + app)) {
                    ofA = ofA == null ? "app-" + app : ofA;
                } else {
                    ofB = ofB == null ? "app-" + app : ofB;
                }
            }
            if (ofA != null && ofB != null) {
                id = candidate;
                appOfA = ofA;
                appOfB = ofB;
            }
        }

        OfflineCaches onA = caches(a);
        assertThat(onA.putIfAbsent(id, userSession(id, appOfA, appOfB), EXPIRY).outcome()).isEqualTo(Outcome.NOT_OWNED);
        assertThat(onA.putIfAbsent(clientKey(id, appOfA), clientSession(id, appOfA), EXPIRY)).isTrue();
        assertThat(onA.putIfAbsent(clientKey(id, appOfB), clientSession(id, appOfB), EXPIRY)).as("B's key").isFalse();
        assertThat(onA.isCached(id)).as("A does not hold the session's entry").isFalse();

        OfflineCaches onB = caches(b);
        assertThat(onB.putIfAbsent(id, userSession(id, appOfA, appOfB), EXPIRY).outcome()).isEqualTo(Outcome.PUT);
        assertThat(onB.isCached(id)).as("B's own client session is not there yet").isFalse();
        assertThat(onB.putIfAbsent(clientKey(id, appOfB), clientSession(id, appOfB), EXPIRY)).isTrue();
        assertThat(onB.putIfAbsent(clientKey(id, appOfA), clientSession(id, appOfA), EXPIRY)).as("A's key").isFalse();
        assertThat(onB.ownsClientSession(id, appOfA)).isFalse();
        assertThat(onB.ownsClientSession(id, appOfB)).isTrue();
        assertThat(onB.isCached(id)).as("cached as far as B's keys go").isTrue();

        assertThat(holds(a, CLIENT_SESSIONS, clientKey(id, appOfA))).isTrue();
        assertThat(holds(b, CLIENT_SESSIONS, clientKey(id, appOfB))).isTrue();
        assertThat(holds(a, SESSIONS, id)).isFalse();
        assertThat(holds(b, SESSIONS, id)).isTrue();
    }

    @Test
    void exactlyOneMemberCountsWhatBecameOfEachSessionWhereEveryMemberReadsIt() {
        for (int i = 0; i < 200; i++) {
            String id = "counted-" + i;
            assertThat(caches(a).countsSession(id)).as(id).isNotEqualTo(caches(b).countsSession(id));
            assertThat(caches(a).countsSession(id)).as(id).isEqualTo(owns(a, id));
        }
    }
}
