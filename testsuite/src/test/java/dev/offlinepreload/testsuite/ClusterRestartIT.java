package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.cluster.NodeLog;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.keycloak.admin.client.Keycloak;
import org.testcontainers.lifecycle.Startables;

/**
 * The loader's guarantees through every way a cluster restarts, on one 3-node cluster, run on every Keycloak minor
 * with a server here (a subclass per older minor; what differs between minors shows here first). At scale,
 * 100,000 sessions of three client sessions each, plus real offline tokens; a full restart during which one app's
 * offline tokens are revoked (the other app's client session of the same session stays) and whole sessions are
 * deleted through the admin API, half while node 1 loads alone, half once node 2 loads beside it; then exact counts on both caches and every summary "0 missing", every revoked
 * token refused on every node and every other one refreshed without a cache miss; bad rows skipped by id; a node paused past failure
 * detection merges back and a node killed mid-load returns, each with exact counts again; a bad option value is
 * named and the node keeps serving.
 */
@Order(2) // long: the 26.4 subclass first, this second, the 26.5 one third, in one lane (docs/testing.md)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS) // one cluster per class; a subclass on another minor may run beside it
class ClusterRestartIT {

    /** The Keycloak version the cluster runs: null for the project's own; a subclass names an older minor. */
    String keycloakVersion() {
        return null;
    }

    private static final String OFFLINE_SESSIONS = "offlineSessions";
    private static final int SESSIONS = 100_000;
    private static final int CLIENT_SESSIONS_PER_SESSION = 3;
    /** Sessions of two apps: the first app's offline token is revoked during the load, the other app's stays. */
    private static final int REVOKED = 40;
    private static final String OTHER_APP = "web-app";
    /** Sessions deleted through the admin API during the load, as many as {@link #REVOKED}, one after each. */
    private static final int DELETED = REVOKED;
    private static final int KEPT = 40;
    /** Node 1 loads everything alone at this rate at first: about 20 s, long enough for the revocations. */
    private static final int SESSIONS_PER_SECOND = 5_000;

    private KeycloakCluster cluster;
    private Rewarming rewarming;
    private final List<TokenResponse> revoked = new ArrayList<>();
    private final List<TokenResponse> otherApp = new ArrayList<>();
    private final List<TokenResponse> deleted = new ArrayList<>();
    private final List<TokenResponse> kept = new ArrayList<>();
    private LocalDateTime firstRevocation;
    private LocalDateTime lastRevocation;
    private String badJson;
    private String badUser;

    @BeforeAll
    void fullRestartWhileSessionsAreRevoked() {
        cluster = KeycloakCluster.builder(getClass().getSimpleName()).keycloakVersion(keycloakVersion()).nodes(3).heap("-Xms512m -Xmx1200m")
                .env(optionEnv("max-sessions-per-second"), Integer.toString(SESSIONS_PER_SECOND))
                .env(optionEnv("revocation-recheck-seconds"), "5")
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", "150000")
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", "450000")
                .build().start();
        TestRealm.create(cluster.node(1), List.of(TestRealm.CLIENT_ID, OTHER_APP), REVOKED + DELETED + KEPT);
        for (int i = 0; i < REVOKED + DELETED + KEPT; i++) {
            OidcClient app = new OidcClient(cluster.node(1 + i % 3));
            String user = TestRealm.username(i + 1);
            if (i < REVOKED) {
                assertThat(app.browserLogin(user, "password").status()).isEqualTo(200);
                TokenResponse first = app.offlineSsoLogin();
                TokenResponse other = app.inSameBrowser(OTHER_APP).offlineSsoLogin();
                assertThat(other.sessionId()).as("the other app's user session").isEqualTo(first.sessionId());
                revoked.add(first);
                otherApp.add(other);
            } else {
                TokenResponse login = app.offlineLogin(user, "password");
                assertThat(login.refreshTokenType()).as("%s", login).isEqualTo("Offline");
                (i < REVOKED + DELETED ? deleted : kept).add(login);
            }
        }
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            OfflineSessionSeeder.Realm realm = seeder.createRealm(cluster.node(1), "minor", CLIENT_SESSIONS_PER_SESSION, 1000);
            seeder.seed(realm, new SeedShape(SESSIONS, CLIENT_SESSIONS_PER_SESSION, 1, 0, 0, 3600));
        }
        List<String> bad = Sql.column(cluster, "SELECT user_session_id FROM offline_user_session s JOIN realm r"
                + " ON r.id = s.realm_id WHERE r.name = 'minor' ORDER BY user_session_id LIMIT 2");
        badJson = bad.get(0);
        badUser = bad.get(1);
        Sql.execute(cluster, "UPDATE offline_user_session SET data = '{not json' WHERE user_session_id = '" + badJson + "'");
        Sql.execute(cluster, "UPDATE offline_user_session SET user_id = 'no-such-user' WHERE user_session_id = '" + badUser + "'");

        cluster.nodes().forEach(KeycloakNode::stop);
        KeycloakNode first = cluster.node(1);
        CompletableFuture<Void> starting = first.startInBackground();
        first.awaitLogLine("Offline session preload on node1: loading", Duration.ofMinutes(3));
        first.awaitServing(Duration.ofMinutes(1));
        // Half of the revocations while node 1 loads alone, the other half once node 2 loads beside it: there a
        // session's entry and its client sessions may live on different nodes (Keycloak 26.4), each read by every node.
        CompletableFuture<Void> revocations = CompletableFuture.runAsync(() -> revoke(0, REVOKED / 2));
        starting.join();
        Startables.deepStart(cluster.nodes().subList(1, 3)).join();
        revocations.join();
        cluster.node(2).awaitLogLine("Offline session preload on node2: loading", Duration.ofMinutes(2));
        revoke(REVOKED / 2, REVOKED);
        cluster.awaitView(3);
        // What the database holds now, less the two bad rows, is what the caches must hold.
        String notBad = " AND user_session_id NOT IN ('" + badJson + "', '" + badUser + "')";
        long loadableSessions = Sql.number(cluster, "SELECT count(*) FROM offline_user_session WHERE offline_flag = '1'" + notBad);
        long loadableClientSessions = Sql.number(cluster, "SELECT count(*) FROM offline_client_session WHERE offline_flag = '1'" + notBad);
        rewarming = new Rewarming(cluster, loadableSessions, loadableClientSessions);
        assertThat(loadableClientSessions).as("client sessions").isGreaterThanOrEqualTo((long) SESSIONS * CLIENT_SESSIONS_PER_SESSION);
    }

    /** Revokes one app's token of sessions [from, to) and deletes as many whole sessions through the admin API. */
    private void revoke(int from, int to) {
        OidcClient mobileApp = new OidcClient(cluster.node(1));
        if (firstRevocation == null) {
            firstRevocation = LocalDateTime.now(ZoneOffset.UTC);
        }
        try (Keycloak admin = TestRealm.admin(cluster.node(1))) {
            for (int i = from; i < to; i++) {
                assertThat(mobileApp.revoke(revoked.get(i).refreshToken())).isEqualTo(200);
                admin.realm(TestRealm.REALM).deleteSession(deleted.get(i).sessionId(), true);
            }
        }
        lastRevocation = LocalDateTime.now(ZoneOffset.UTC);
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void aFullRestartDuringRevocationsLeavesExactlyTheLoadableRowsCached() {
        rewarming.awaitExactly(3);
        List<String> lines = cluster.node(1).log().linesSinceStart();
        LocalDateTime loadStart = lines.stream().filter(l -> l.contains("Offline session preload on node1: loading"))
                .map(NodeLog::timeOf).findFirst().orElseThrow();
        LocalDateTime loadEnd = lines.stream().filter(l -> l.contains("Offline session preload on node1 ")
                        && (l.contains(" finished in ") || l.contains(" stopped by a topology change in ")))
                .map(NodeLog::timeOf).findFirst().orElseThrow();
        assertThat(firstRevocation).as("revocations began before node 1's first pass ended").isBefore(loadEnd);
        assertThat(lastRevocation).as("revocations ended after node 1's first pass began").isAfter(loadStart);
        // The layout is read from the caches: client sessions with owners of their own only on 26.4 (no grouper there).
        boolean ungrouped = cluster.runsMinor("26.4");
        for (KeycloakNode node : cluster.nodes()) {
            assertThat(node.log().linesSinceStart().stream()
                    .anyMatch(l -> l.contains("offlineClientSessions places a client session by its own key")))
                    .as("%s says that every node reads every session", node.name()).isEqualTo(ungrouped);
        }
    }

    @Test
    @Order(2)
    void everyRevokedTokenIsRefusedOnEveryNodeAndEveryOtherRefreshes() {
        List<String> refused = new ArrayList<>();
        revoked.forEach(t -> refused.add(t.refreshToken()));
        deleted.forEach(t -> refused.add(t.refreshToken()));
        for (KeycloakNode node : cluster.nodes()) {
            for (int i = 0; i < refused.size(); i++) {
                assertThat(new OidcClient(node).refresh(refused.get(i)).status()).as("revoked token %d on %s", i, node.name())
                        .isEqualTo(400);
            }
        }
        // The sessions that stay were loaded: each refresh finds its session in the cache, on every node.
        long missesBefore = sumOverNodes(m -> m.misses(OFFLINE_SESSIONS));
        long hitsBefore = sumOverNodes(m -> m.hits(OFFLINE_SESSIONS));
        int refreshes = 0;
        for (KeycloakNode node : cluster.nodes()) {
            for (int i = 0; i < KEPT; i++) {
                assertThat(new OidcClient(node).refresh(kept.get(i).refreshToken()).status()).as("kept %d on %s", i, node.name())
                        .isEqualTo(200);
                refreshes++;
            }
            for (int i = 0; i < REVOKED; i++) {
                TokenResponse refreshed = new OidcClient(node, TestRealm.REALM, OTHER_APP).refresh(otherApp.get(i).refreshToken());
                assertThat(refreshed.status()).as("other app of revoked session %d on %s: %s", i, node.name(), refreshed)
                        .isEqualTo(200);
                assertThat(refreshed.sessionId()).as("other app of revoked session %d on %s", i, node.name())
                        .isEqualTo(revoked.get(i).sessionId());
                refreshes++;
            }
        }
        assertThat(sumOverNodes(m -> m.misses(OFFLINE_SESSIONS)) - missesBefore)
                .as("offlineSessions cache misses during the refreshes").isZero();
        assertThat(sumOverNodes(m -> m.hits(OFFLINE_SESSIONS)) - hitsBefore).as("offlineSessions cache hits")
                .isGreaterThanOrEqualTo(refreshes);
    }

    private long sumOverNodes(ToLongFunction<NodeMetrics> metric) {
        return cluster.nodes().stream().mapToLong(n -> metric.applyAsLong(NodeMetrics.scrape(n))).sum();
    }

    @Test
    @Order(3)
    void badRowsAreSkippedByIdAndNeverCached() {
        List<String> logs = cluster.nodes().stream().flatMap(n -> n.log().lines().stream()).toList();
        assertThat(logs).anyMatch(l -> l.contains("skipped offline session " + badJson + ": DATA is not valid session JSON"));
        assertThat(logs).anyMatch(l -> l.contains("skipped offline session " + badUser + ": user no-such-user does not exist"));
        assertThat(cluster.nodes()).allSatisfy(n -> assertThat(n.log().lines())
                .noneMatch(l -> l.contains("ERROR") && l.contains("[dev.offlinepreload")));
    }

    @Test
    @Order(4)
    void aNodePausedPastFailureDetectionMergesBackWithNothingMissing() {
        rewarming.pauseUntilMergedBack(cluster.node(3));
    }

    @Test
    @Order(5)
    void aNodeKilledMidLoadAndItsReturnLeaveNothingMissing() {
        rewarming.killMidLoadAndReturn(cluster.node(2));
    }

    @Test
    @Order(6)
    void aBadOptionValueIsNamedAndTheNodeKeepsServing() {
        KeycloakNode node = cluster.node(3);
        node.stopGracefully();
        node.setEnv(optionEnv("revocation-recheck-seconds"), "soon");
        node.start();
        assertThat(node.log().linesSinceStart()).anyMatch(l -> l.contains("ERROR")
                && l.contains("Invalid value 'soon' for option spi-user-sessions--offline-preload--revocation-recheck-seconds")
                && l.contains("Offline session preloading and the online index build are off on this node"));
        TokenResponse login = new OidcClient(node).offlineLogin(TestRealm.username(REVOKED + DELETED + KEPT), "password");
        assertThat(login.status()).as("%s", login).isEqualTo(200);
        assertThat(new OidcClient(cluster.node(1)).refresh(login.refreshToken()).status()).isEqualTo(200);
        assertThat(new OidcClient(node).refresh(kept.get(0).refreshToken()).status()).isEqualTo(200);
    }
}
