package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.lifecycle.Startables;

/**
 * The provider on MariaDB: installed on an existing cluster, three nodes starting at the same moment run its changelog
 * once; the indexes; a restart that changes nothing; preloading. (On an empty database Keycloak's own first schema
 * creation is not safe for simultaneous starts, so the cluster is created once before.)
 */
class MariaDbIT {

    private static final int SESSIONS = 30;
    private static KeycloakCluster cluster;
    private static final List<TokenResponse> tokens = new ArrayList<>();
    private static List<String> changesetsBefore;

    @BeforeAll
    static void threeNodesAtOnceThenAgain() {
        cluster = KeycloakCluster.builder(MariaDbIT.class.getSimpleName()).nodes(3).mariadb().build().start();
        // As if the jar were new to this cluster: none of its indexes, no changelog table.
        cluster.nodes().forEach(KeycloakNode::stop);
        Sql.execute(cluster, "DROP INDEX OFFPRELOAD_USS_EXPIRY_REFRESH ON OFFLINE_USER_SESSION");
        Sql.execute(cluster, "DROP INDEX OFFPRELOAD_USS_EXPIRY_CREATED ON OFFLINE_USER_SESSION");
        Sql.execute(cluster, "DROP TABLE DATABASECHANGELOG_OFFPRELOAD");
        Startables.deepStart(cluster.nodes()).join();
        cluster.awaitView(3);
        changesetsBefore = changesets();
        TestRealm.create(cluster.node(1), SESSIONS);
        for (int i = 1; i <= SESSIONS; i++) {
            TokenResponse login = new OidcClient(cluster.node(1 + i % 3)).offlineLogin(TestRealm.username(i), "password");
            assertThat(login.status()).as("%s", login).isEqualTo(200);
            tokens.add(login);
        }
        cluster.nodes().forEach(KeycloakNode::stop);
        Startables.deepStart(cluster.nodes()).join();
        cluster.awaitView(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static List<String> changesets() {
        return Sql.rows(cluster, "SELECT ID, EXECTYPE, DATEEXECUTED, ORDEREXECUTED FROM DATABASECHANGELOG_OFFPRELOAD ORDER BY ORDEREXECUTED");
    }

    @Test
    void theIndexesExistAndTheirChangesetsRanOnce() {
        assertThat(Sql.column(cluster, "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS"
                + " WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME LIKE 'OFFPRELOAD%' ORDER BY 1"))
                .containsExactly("OFFPRELOAD_USS_EXPIRY_CREATED", "OFFPRELOAD_USS_EXPIRY_REFRESH");
        assertThat(changesetsBefore).extracting(row -> row.split("\\|")[0] + "|" + row.split("\\|")[1])
                .containsExactly("offpreload-1-uss-expiry-refresh|EXECUTED", "offpreload-2-uss-expiry-created|EXECUTED");
        assertThat(changesets()).as("after all nodes restarted at once").isEqualTo(changesetsBefore);
    }

    @Test
    void offlineSessionsArePreloadedAfterTheRestart() {
        await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                .until(() -> cluster.nodes().stream().allMatch(n -> NodeMetrics.scrape(n).preloadState("done"))
                        && cluster.nodes().stream().mapToLong(n -> NodeMetrics.scrape(n).entries("offlineSessions")).sum() == SESSIONS);
        for (int i = 0; i < SESSIONS; i += 7) {
            KeycloakNode node = cluster.node(1 + i % 3);
            assertThat(new OidcClient(node).refresh(tokens.get(i).refreshToken()).status()).as(node.name()).isEqualTo(200);
        }
    }
}
