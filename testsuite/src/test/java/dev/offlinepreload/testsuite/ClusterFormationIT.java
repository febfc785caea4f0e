package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import dev.offlinepreload.testsuite.db.Sql;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;
import org.testcontainers.lifecycle.Startables;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.keycloak.admin.client.Keycloak;

/**
 * The ground everything else stands on: three real nodes form one cluster, all running this provider, and its
 * Liquibase changelog has added its indexes. The restart of all nodes at once runs last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterFormationIT {

    private static KeycloakCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = KeycloakCluster.builder(ClusterFormationIT.class.getSimpleName()).nodes(3).build().start();
        TestRealm.create(cluster.node(1), 1);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void everyNodeSeesAClusterViewOfThree() {
        assertThat(cluster.nodes()).allSatisfy(node -> assertThat(node.viewSize()).as(node.name()).isEqualTo(3));
    }

    @Test
    void everyNodeHandsOutThisProviderForUserSessions() {
        for (KeycloakNode node : cluster.nodes()) {
            try (Keycloak admin = TestRealm.admin(node)) {
                var userSessions = admin.serverInfo().getInfo().getProviders().get("userSessions");
                assertThat(userSessions.getProviders()).as(node.name()).containsKey("offline-preload");
                Map<String, String> info = userSessions.getProviders().get("offline-preload").getOperationalInfo();
                assertThat(info).as(node.name()).containsEntry("active-provider", "offline-preload");
            }
        }
    }

    @Test
    void offlineTokenFromNodeOneRefreshesOnNodesTwoAndThree() {
        TokenResponse login = new OidcClient(cluster.node(1)).offlineLogin(TestRealm.username(1), "password");
        assertThat(login.status()).as("%s", login).isEqualTo(200);
        assertThat(login.refreshTokenType()).isEqualTo("Offline");

        String refreshToken = login.refreshToken();
        for (KeycloakNode node : cluster.nodes().subList(1, 3)) {
            TokenResponse refreshed = new OidcClient(node).refresh(refreshToken);
            assertThat(refreshed.status()).as("refresh on %s: %s", node.name(), refreshed).isEqualTo(200);
            assertThat(refreshed.sessionId()).isEqualTo(login.sessionId());
            refreshToken = refreshed.refreshToken();
        }
    }

    @Test
    @Order(1)
    void theIndexesExistAndTheirChangesetsRan() {
        assertThat(Sql.column(cluster, "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'offpreload_%' ORDER BY 1"))
                .containsExactly("offpreload_uss_expiry_created", "offpreload_uss_expiry_refresh");
        assertThat(Sql.column(cluster, "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                + " WHERE c.relname LIKE 'offpreload_%' AND NOT i.indisvalid")).containsExactly("0");
        assertThat(Sql.rows(cluster, "SELECT id, exectype FROM databasechangelog_offpreload"
                + " ORDER BY orderexecuted")).containsExactly("offpreload-1-uss-expiry-refresh|EXECUTED",
                "offpreload-2-uss-expiry-created|EXECUTED");
    }

    @Test
    @Order(Integer.MAX_VALUE) // restarts the cluster: last
    void allThreeNodesStartingAtOnceComeUpAndChangeNothing() {
        String changesets = "SELECT id, exectype, dateexecuted, orderexecuted FROM databasechangelog_offpreload"
                + " ORDER BY orderexecuted";
        var before = Sql.rows(cluster, changesets);
        var indexesBefore = Sql.rows(cluster, "SELECT c.relname, c.oid FROM pg_class c WHERE c.relname LIKE 'offpreload_%' ORDER BY 1");

        cluster.nodes().forEach(KeycloakNode::stop);
        Startables.deepStart(cluster.nodes()).join();
        cluster.awaitView(3);

        assertThat(Sql.rows(cluster, changesets)).as("changesets after a restart").isEqualTo(before);
        assertThat(Sql.rows(cluster, "SELECT c.relname, c.oid FROM pg_class c WHERE c.relname LIKE 'offpreload_%' ORDER BY 1"))
                .as("the same index objects, not rebuilt").isEqualTo(indexesBefore);
        everyNodeHandsOutThisProviderForUserSessions();
    }
}
