package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import dev.offlinepreload.testsuite.cluster.Images;
import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.cluster.TestPaths;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * An upgrade from Keycloak 26.4 to 26.5 with the jar installed on both: 26.4 has its own index of exactly the first
 * changeset's columns and no {@code REMEMBER_ME}, so there the changelog adds nothing; Keycloak 26.5.0 drops that index
 * and adds its own, and this changelog's changesets then run at the first start. No index is doubled at either step,
 * and the offline sessions of 26.4 are loaded and refresh on 26.5 (the versions of the root pom).
 */
@Tag("older-minor")
class UpgradeIT {

    private static final int SESSIONS = 2_000;
    private static final String KEYCLOAKS_OLD_INDEX = "idx_offline_uss_by_last_session_refresh";
    /** Every group of indexes on OFFLINE_USER_SESSION with the same columns in the same order, by name. */
    private static final String DUPLICATE_INDEXES = "SELECT string_agg(indexrelid::regclass::text, ', ' ORDER BY indexrelid::regclass::text)"
            + " FROM pg_index WHERE indrelid = 'offline_user_session'::regclass GROUP BY indkey::text HAVING count(*) > 1";

    private static KeycloakCluster cluster;
    private static TokenResponse before;
    private static List<String> indexesBefore;
    private static List<String> changesetsBefore;

    @BeforeAll
    static void startOnTheOlderMinorThenUpgrade() {
        cluster = KeycloakCluster.builder(UpgradeIT.class.getSimpleName()).keycloakVersion(TestPaths.olderMinor("26.4"))
                .nodes(1).build().start();
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            seeder.seed(seeder.createRealm(cluster.node(1), "upgrade", 2, 100), SeedShape.simple(SESSIONS));
        }
        TestRealm.create(cluster.node(1), List.of(TestRealm.CLIENT_ID), 1);
        before = new OidcClient(cluster.node(1)).offlineLogin(TestRealm.username(1), "password");
        assertThat(before.refreshTokenType()).as("%s", before).isEqualTo("Offline");
        indexesBefore = indexes();
        changesetsBefore = Sql.column(cluster, "SELECT id FROM databasechangelog_offpreload ORDER BY id");
        assertThat(Sql.column(cluster, DUPLICATE_INDEXES)).as("doubled indexes before the upgrade").isEmpty();

        KeycloakNode node = cluster.node(1);
        node.upgradeTo(Images.keycloakWithProvider(TestPaths.olderMinor("26.5"), "postgres", ""));
        node.awaitLogLine("Offline session preload on node1 finished", Duration.ofMinutes(3));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static List<String> indexes() {
        return Sql.column(cluster, "SELECT indexname FROM pg_indexes WHERE tablename = 'offline_user_session' ORDER BY 1");
    }

    @Test
    void onTheOlderMinorKeycloakKeepsItsOwnIndexAndTheChangelogAddsNothing() {
        assertThat(indexesBefore).contains(KEYCLOAKS_OLD_INDEX).noneMatch(i -> i.startsWith("offpreload_"));
        assertThat(changesetsBefore).as("changesets recorded on the older minor").isEmpty();
    }

    @Test
    void afterTheUpgradeTheChangesetsRanOnceAndNoIndexIsDoubled() {
        assertThat(indexes()).doesNotContain(KEYCLOAKS_OLD_INDEX)
                .contains("offpreload_uss_expiry_refresh", "offpreload_uss_expiry_created");
        assertThat(Sql.column(cluster, "SELECT id FROM databasechangelog_offpreload ORDER BY id"))
                .containsExactly("offpreload-1-uss-expiry-refresh", "offpreload-2-uss-expiry-created");
        assertThat(Sql.column(cluster, DUPLICATE_INDEXES)).as("indexes with the same columns after the upgrade").isEmpty();
    }

    @Test
    void theOlderMinorsSessionsAreLoadedAndRefreshAfterTheUpgrade() {
        KeycloakNode node = cluster.node(1);
        assertThat(node.log().linesSinceStart()).anyMatch(l -> l.contains("Offline session preload on node1 finished")
                && l.contains("0 missing from the caches afterwards (0 client sessions)"));
        assertThat(NodeMetrics.scrape(node).entries("offlineSessions")).as("every offline session of 26.4, cached")
                .isEqualTo(Sql.number(cluster, "SELECT count(*) FROM offline_user_session WHERE offline_flag = '1'"))
                .isGreaterThan(SESSIONS);
        TokenResponse refreshed = new OidcClient(node).refresh(before.refreshToken());
        assertThat(refreshed.status()).as("%s", refreshed).isEqualTo(200);
        assertThat(new OidcClient(node).revoke(refreshed.refreshToken())).isEqualTo(200);
        assertThat(new OidcClient(node).refresh(refreshed.refreshToken()).status()).isEqualTo(400);
    }
}
