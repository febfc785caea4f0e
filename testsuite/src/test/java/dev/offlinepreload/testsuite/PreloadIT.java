package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.SessionSeeder;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.keycloak.admin.client.Keycloak;

/**
 * Persistent user sessions (Keycloak's default): after a full cluster restart every node loads exactly its share,
 * refreshes hit the cache, bad rows are skipped, and sessions revoked while the load runs stay revoked.
 */
class PreloadIT {

    private static final String OFFLINE_SESSIONS = "offlineSessions";
    private static final int REAL = 30;
    private static final int REVOKED = 10;
    private static final int CLONES = 3000;

    private static KeycloakCluster cluster;
    private static final List<TokenResponse> tokens = new ArrayList<>();

    @BeforeAll
    static void loadAfterAFullRestartWhileSessionsAreRevoked() {
        cluster = KeycloakCluster.builder(PreloadIT.class.getSimpleName()).nodes(3)
                // Small batches and one worker: node 1's load runs long enough to revoke sessions while it runs.
                .env("KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__BATCH_SIZE", "5")
                .env("KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__WORKERS_PER_NODE", "1")
                .env("KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__REVOCATION_RECHECK_SECONDS", "5")
                .build().start();
        TestRealm.create(cluster.node(1), REAL);
        for (int i = 1; i <= REAL; i++) {
            TokenResponse login = new OidcClient(cluster.node(1 + i % 3)).offlineLogin(TestRealm.username(i), "password");
            assertThat(login.status()).as("%s", login).isEqualTo(200);
            tokens.add(login);
        }

        try (SessionSeeder db = new SessionSeeder(cluster)) {
            int now = SessionSeeder.now();
            db.cloneSession(tokens.get(REAL - 1).sessionId(), "seed-", CLONES, now, 3000);
            // The real sessions become the least recent, so they are loaded last: revoking them below races the load.
            db.execute("UPDATE offline_user_session SET last_session_refresh = " + (now - 7200) + ", created_on = "
                    + (now - 9000) + " WHERE user_session_id NOT LIKE 'seed-%'");
            String template = tokens.get(REAL - 1).sessionId();
            db.cloneSession(template, "bad-json-", 1, now, 1);
            db.execute("UPDATE offline_user_session SET data = '{not json' WHERE user_session_id = 'bad-json-1'");
            db.cloneSession(template, "bad-user-", 1, now, 1);
            db.execute("UPDATE offline_user_session SET user_id = 'no-such-user' WHERE user_session_id = 'bad-user-1'");
            db.cloneSession(template, "bad-time-", 1, now, 1);
            db.execute("UPDATE offline_user_session SET last_session_refresh = " + (now + 86_400)
                    + " WHERE user_session_id = 'bad-time-1'");
            db.cloneSession(template, "no-realm-", 1, now, 1);
            db.execute("UPDATE offline_user_session SET realm_id = 'deleted-realm' WHERE user_session_id = 'no-realm-1'");
            db.cloneSession(template, "expired-", 1, now - 40 * 86_400, 1);
        }

        for (KeycloakNode node : cluster.nodes()) {
            node.stop();
        }
        cluster.node(1).start();
        // Node 1 is loading everything alone now; revoke sessions concurrently, two ways.
        CompletableFuture<Void> revocations = CompletableFuture.runAsync(() -> {
            OidcClient client = new OidcClient(cluster.node(1));
            try (Keycloak admin = TestRealm.admin(cluster.node(1))) {
                for (int i = 0; i < REVOKED; i++) {
                    if (i % 2 == 0) {
                        assertThat(client.revoke(tokens.get(i).refreshToken())).isEqualTo(200);
                    } else {
                        admin.realm(TestRealm.REALM).deleteSession(tokens.get(i).sessionId(), true);
                    }
                }
            }
        });
        org.testcontainers.lifecycle.Startables.deepStart(cluster.nodes().subList(1, 3)).join();
        revocations.join();
        cluster.awaitView(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static long sumOverNodes(java.util.function.ToLongFunction<NodeMetrics> metric) {
        return cluster.nodes().stream().mapToLong(n -> metric.applyAsLong(NodeMetrics.scrape(n))).sum();
    }

    private static long cachedOnAllNodes() {
        return sumOverNodes(m -> m.entries(OFFLINE_SESSIONS));
    }

    private static void awaitLoaded(long expected) {
        await("every node done and " + expected + " offline sessions cached").atMost(Duration.ofMinutes(3))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> cluster.nodes().stream().allMatch(n -> NodeMetrics.scrape(n).preloadState("done"))
                        && cachedOnAllNodes() == expected);
    }

    @Test
    void everyLoadableSessionIsCachedOnExactlyOneNode() {
        long expected = CLONES + REAL - REVOKED;
        awaitLoaded(expected);
        for (KeycloakNode node : cluster.nodes()) {
            long entries = NodeMetrics.scrape(node).entries(OFFLINE_SESSIONS);
            // One owner per key: each node holds roughly a third; none is empty, none holds everything.
            assertThat(entries).as("%s holds its share", node.name()).isBetween(expected / 5, expected / 2);
        }
    }

    @Test
    void refreshesAfterTheRestartAreCacheHitsOnEveryNode() {
        awaitLoaded(CLONES + REAL - REVOKED);
        long missesBefore = sumOverNodes(m -> m.misses(OFFLINE_SESSIONS));
        long hitsBefore = sumOverNodes(m -> m.hits(OFFLINE_SESSIONS));
        for (int i = REVOKED; i < REAL; i++) {
            KeycloakNode node = cluster.node(1 + i % 3);
            TokenResponse refreshed = new OidcClient(node).refresh(tokens.get(i).refreshToken());
            assertThat(refreshed.status()).as("refresh of session %d on %s: %s", i, node.name(), refreshed).isEqualTo(200);
        }
        long missesAfter = sumOverNodes(m -> m.misses(OFFLINE_SESSIONS));
        long hitsAfter = sumOverNodes(m -> m.hits(OFFLINE_SESSIONS));
        assertThat(missesAfter - missesBefore).as("offlineSessions cache misses during the refreshes").isZero();
        assertThat(hitsAfter - hitsBefore).as("offlineSessions cache hits").isGreaterThanOrEqualTo(REAL - REVOKED);
    }

    @Test
    void sessionsRevokedDuringTheLoadStayRevokedOnEveryNode() {
        awaitLoaded(CLONES + REAL - REVOKED);
        for (int i = 0; i < REVOKED; i++) {
            for (KeycloakNode node : cluster.nodes()) {
                TokenResponse refreshed = new OidcClient(node).refresh(tokens.get(i).refreshToken());
                assertThat(refreshed.status()).as("revoked session %d refreshed on %s: %s", i, node.name(), refreshed)
                        .isEqualTo(400);
            }
        }
    }

    @Test
    void badRowsAreSkippedByIdAndNeverCached() {
        awaitLoaded(CLONES + REAL - REVOKED);
        List<String> logs = cluster.nodes().stream().flatMap(n -> n.log().lines().stream()).toList();
        assertThat(logs).anyMatch(l -> l.contains("skipped offline session bad-json-1: DATA is not valid session JSON"));
        assertThat(logs).anyMatch(l -> l.contains("skipped offline session bad-user-1: user no-such-user does not exist"));
        assertThat(logs).anyMatch(l -> l.contains("skipped offline session bad-time-1: timestamp in the future"));
        // The exact total above already shows that neither these nor the expired or realm-less rows were cached.
        assertThat(cluster.nodes()).allSatisfy(n -> assertThat(n.log().lines())
                .noneMatch(l -> l.contains("ERROR") && l.contains("[dev.offlinepreload")));
    }
}
