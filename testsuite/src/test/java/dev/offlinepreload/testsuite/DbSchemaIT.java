package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
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
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Keycloak in a schema of its own ({@code db-schema}) that the database user's own search path does not hold, as where
 * several applications share one database: the changelog builds the indexes there, the online build names it and
 * rebuilds one there, and the loader reads the sessions from there.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DbSchemaIT {

    private static final String SCHEMA = "idp";
    private static final String REFRESH = "offpreload_uss_expiry_refresh";
    private static final int SESSIONS = 3;

    private static KeycloakCluster cluster;

    @BeforeAll
    static void keycloakInItsOwnSchema() {
        cluster = KeycloakCluster.builder(DbSchemaIT.class.getSimpleName()).nodes(1).dbSchema(SCHEMA).build().start();
        TestRealm.create(cluster.node(1), SESSIONS);
        for (int i = 1; i <= SESSIONS; i++) {
            TokenResponse login = new OidcClient(cluster.node(1)).offlineLogin(TestRealm.username(i), "password");
            assertThat(login.status()).as("%s", login).isEqualTo(200);
        }
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static String indexes() {
        return String.join(",", Sql.column(cluster, "SELECT indexname || '@' || schemaname FROM pg_indexes"
                + " WHERE indexname LIKE 'offpreload%' ORDER BY 1"));
    }

    @Test
    @Order(1)
    void keycloaksTablesAreOutsideTheUsersSearchPath() {
        // A connection Keycloak's Liquibase has not touched does not see the schema: this plain one, for example.
        assertThat(Sql.column(cluster, "SELECT current_schemas(false)::text")).containsExactly("{public}");
        assertThat(Sql.column(cluster, "SELECT schemaname FROM pg_tables WHERE tablename = 'offline_user_session'"))
                .containsExactly(SCHEMA);
    }

    @Test
    @Order(2)
    void theChangelogBuiltTheIndexesInKeycloaksSchema() {
        assertThat(indexes()).isEqualTo("offpreload_uss_expiry_created@idp,offpreload_uss_expiry_refresh@idp");
        assertThat(Sql.rows(cluster, "SELECT id, exectype FROM " + SCHEMA + ".databasechangelog_offpreload ORDER BY orderexecuted"))
                .containsExactly("offpreload-1-uss-expiry-refresh|EXECUTED", "offpreload-2-uss-expiry-created|EXECUTED");
    }

    @Test
    @Order(3)
    void afterARestartTheNodeBuildsAMissingIndexOnlineAndLoadsTheSessions() {
        KeycloakNode node = cluster.node(1);
        node.stopGracefully();
        // As if a DBA had dropped it: its changeset stays recorded, so only the online build can bring it back.
        Sql.execute(cluster, "DROP INDEX " + SCHEMA + "." + REFRESH);
        node.start();

        // Keycloak's pooled connections have the schema on their search path only where its Liquibase ran on them
        // (PostgreSQL's statement log: SET SEARCH_PATH TO idp, ... on those, nothing on connections opened later), so
        // an unqualified statement works or fails depending on the connection it gets: the build names the schema.
        assertThat(node.awaitLogLine("Offline-session index OFFPRELOAD_USS_EXPIRY_REFRESH: building on node", Duration.ofMinutes(2)))
                .contains("CREATE INDEX CONCURRENTLY OFFPRELOAD_USS_EXPIRY_REFRESH ON " + SCHEMA + ".OFFLINE_USER_SESSION ");
        node.awaitLogLine("Offline-session index OFFPRELOAD_USS_EXPIRY_REFRESH: built on node", Duration.ofMinutes(2));
        assertThat(indexes()).isEqualTo("offpreload_uss_expiry_created@idp,offpreload_uss_expiry_refresh@idp");
        assertThat(Sql.column(cluster, "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                + " WHERE c.relname = '" + REFRESH + "'")).containsExactly("t");

        await("the node's pass is done").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(1))
                .until(() -> NodeMetrics.scrape(node).preloadState("done"));
        NodeMetrics metrics = NodeMetrics.scrape(node);
        assertThat(metrics.preloaded("loaded")).as("sessions loaded from schema " + SCHEMA).isEqualTo(SESSIONS);
        assertThat(metrics.preloaded("failed")).isZero();
        assertThat(metrics.entries("offlineSessions")).isEqualTo(SESSIONS);
        assertThat(node.log().linesSinceStart()).as("this provider's errors")
                .noneMatch(l -> l.contains("ERROR") && l.contains("[dev.offlinepreload"));
    }
}
