package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Keycloak's session caches switched off ({@code spi-user-sessions--infinispan--use-caches=false}, the default from
 * Keycloak 26.8 on, an option since 26.4): there is nothing to load into. Each node says so once at startup and loads
 * nothing; the index changelog still runs; sessions work as in stock Keycloak. Runs on every served minor.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS) // one cluster per class; a subclass on another minor may run beside it
class CachesOffIT {

    /** The Keycloak version the cluster runs: null for the project's own; a subclass names an older minor. */
    String keycloakVersion() {
        return null;
    }

    private KeycloakCluster cluster;

    @BeforeAll
    void restartWithCachesOffAndSessionsInTheDatabase() {
        cluster = KeycloakCluster.builder(getClass().getSimpleName()).keycloakVersion(keycloakVersion()).nodes(2)
                .env("KC_SPI_USER_SESSIONS__INFINISPAN__USE_CACHES", "false")
                .build().start();
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            seeder.seed(seeder.createRealm(cluster.node(1), TestRealm.REALM, 3, 10), SeedShape.simple(2_000));
        }
        cluster.restartAll();
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static OidcClient client(KeycloakNode node) {
        return new OidcClient(node, TestRealm.REALM, "app-1");
    }

    @Test
    void everyNodeSaysOnceThatThereIsNothingToLoadAndLoadsNothing() {
        for (KeycloakNode node : cluster.nodes()) {
            assertThat(node.log().linesSinceStart().stream()
                    .filter(l -> l.contains("Offline session preloading does not apply on this node")))
                    .as(node.name()).singleElement()
                    .satisfies(l -> assertThat(l).contains("Keycloak keeps no session caches here"));
            assertThat(node.log().linesSinceStart()).as(node.name())
                    .noneMatch(l -> l.contains("Offline session preload on " + node.name() + ": loading"))
                    .noneMatch(l -> l.contains("ERROR") && l.contains("offlinepreload"));
            NodeMetrics metrics = NodeMetrics.scrape(node);
            assertThat(metrics.preloadState("not_applicable")).as(node.name()).isTrue();
            assertThat(metrics.entries("offlineSessions")).as(node.name()).isZero();
        }
    }

    @Test
    void theIndexChangelogStillRan() {
        if (cluster.runsMinor("26.4")) {
            // 26.4 has its own index for its one expiration query, and no REMEMBER_ME: both changesets skip themselves
            // unrecorded (they run after an upgrade to 26.5), and the online build leaves the table alone.
            assertThat(Sql.column(cluster, "SELECT id FROM databasechangelog_offpreload ORDER BY id")).isEmpty();
            assertThat(Sql.column(cluster, "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'offpreload_%'")).isEmpty();
            assertThat(Sql.column(cluster, "SELECT indexname FROM pg_indexes WHERE indexname = 'idx_offline_uss_by_last_session_refresh'"))
                    .hasSize(1);
            return;
        }
        assertThat(Sql.column(cluster, "SELECT id FROM databasechangelog_offpreload ORDER BY id"))
                .containsExactly("offpreload-1-uss-expiry-refresh", "offpreload-2-uss-expiry-created");
        assertThat(Sql.column(cluster, "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'offpreload_%' ORDER BY indexname"))
                .containsExactly("offpreload_uss_expiry_created", "offpreload_uss_expiry_refresh");
    }

    @Test
    void loginRefreshOnTheOtherNodeAndRevocationWorkAsStock() {
        TokenResponse login = client(cluster.node(1)).offlineLogin(TestRealm.username(1), "password");
        assertThat(login.status()).as("%s", login).isEqualTo(200);
        TokenResponse refreshed = client(cluster.node(2)).refresh(login.refreshToken());
        assertThat(refreshed.status()).as("%s", refreshed).isEqualTo(200);
        assertThat(client(cluster.node(2)).revoke(refreshed.refreshToken())).isEqualTo(200);
        assertThat(client(cluster.node(1)).refresh(refreshed.refreshToken()).status()).isEqualTo(400);
    }
}
