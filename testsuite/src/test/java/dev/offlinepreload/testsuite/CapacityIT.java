package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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

/**
 * More sessions than the caches hold: each node loads its most recently refreshed sessions up to max-count less the
 * headroom, never more, and evicts nothing.
 */
class CapacityIT {

    private static final int MAX_COUNT = 600;
    private static final int FILL_LIMIT = MAX_COUNT - MAX_COUNT * 10 / 100;
    private static final int NEWEST = 10;
    private static final int OLDEST = 10;
    private static final int CLONES = 3000;

    private static KeycloakCluster cluster;
    private static final List<TokenResponse> tokens = new ArrayList<>();
    /** Per node, right after loading and before any request: what the loader alone put into the caches. */
    private static final List<NodeMetrics> afterLoad = new ArrayList<>();

    @BeforeAll
    static void restartWithMoreSessionsThanFit() {
        cluster = KeycloakCluster.builder(CapacityIT.class.getSimpleName()).nodes(2)
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", Integer.toString(MAX_COUNT))
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", Integer.toString(MAX_COUNT))
                .env("KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__CAPACITY_HEADROOM_PERCENT", "10")
                .build().start();
        TestRealm.create(cluster.node(1), NEWEST + OLDEST);
        for (int i = 1; i <= NEWEST + OLDEST; i++) {
            TokenResponse login = new OidcClient(cluster.node(1)).offlineLogin(TestRealm.username(i), "password");
            assertThat(login.status()).as("%s", login).isEqualTo(200);
            tokens.add(login);
        }
        try (SessionSeeder db = new SessionSeeder(cluster)) {
            int now = SessionSeeder.now();
            // Clones refreshed between 10 minutes and about an hour ago; the first NEWEST real sessions just now,
            // the last OLDEST real sessions two days ago: far below what fits.
            db.cloneSession(tokens.get(0).sessionId(), "seed-", CLONES, now - 600, 3000);
            for (int i = 0; i < NEWEST + OLDEST; i++) {
                int refreshed = i < NEWEST ? now : now - 2 * 86_400;
                db.execute("UPDATE offline_user_session SET last_session_refresh = " + refreshed + ", created_on = "
                        + (refreshed - 60) + " WHERE user_session_id = '" + tokens.get(i).sessionId() + "'");
            }
        }
        cluster.restartAll();
        // "done" for 3 s on both: a node that has not yet noticed the other's join cannot pass for finished.
        await("both nodes loaded").atMost(Duration.ofMinutes(3)).during(Duration.ofSeconds(3))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> cluster.nodes().stream().allMatch(n -> NodeMetrics.scrape(n).preloadState("done")));
        cluster.nodes().forEach(n -> afterLoad.add(NodeMetrics.scrape(n)));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void eachNodeFillsUpToItsLimitAndNoFurther() {
        for (int i = 0; i < cluster.nodes().size(); i++) {
            KeycloakNode node = cluster.nodes().get(i);
            NodeMetrics m = afterLoad.get(i);
            assertThat(m.entries("offlineSessions")).as("%s offlineSessions", node.name()).isEqualTo(FILL_LIMIT);
            assertThat(m.entries("offlineClientSessions")).as("%s offlineClientSessions", node.name()).isEqualTo(FILL_LIMIT);
            assertThat(m.value("vendor_statistics_evictions", "cache", "offlineSessions"))
                    .as("%s evictions", node.name()).isZero();
        }
    }

    @Test
    void theMostRecentlyRefreshedAreTheOnesLoaded() {
        long newestMisses = missesWhileRefreshing(tokens.subList(0, NEWEST));
        long oldestMisses = missesWhileRefreshing(tokens.subList(NEWEST, NEWEST + OLDEST));
        assertThat(newestMisses).as("misses refreshing the newest sessions (all loaded)").isZero();
        assertThat(oldestMisses).as("misses refreshing the oldest sessions (none loaded)").isGreaterThanOrEqualTo(OLDEST);
    }

    private static long missesWhileRefreshing(List<TokenResponse> sessions) {
        long before = cluster.nodes().stream().mapToLong(n -> NodeMetrics.scrape(n).misses("offlineSessions")).sum();
        for (TokenResponse session : sessions) {
            TokenResponse refreshed = new OidcClient(cluster.node(1)).refresh(session.refreshToken());
            assertThat(refreshed.status()).as("%s", refreshed).isEqualTo(200);
        }
        return cluster.nodes().stream().mapToLong(n -> NodeMetrics.scrape(n).misses("offlineSessions")).sum() - before;
    }
}
