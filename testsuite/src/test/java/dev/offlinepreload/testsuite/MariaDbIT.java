package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.NodeLog.indexOf;
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
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.testcontainers.lifecycle.Startables;

/**
 * The provider on MariaDB: installed on an existing cluster, three nodes starting at the same moment run its changelog
 * once; the indexes; a restart that changes nothing; preloading; and on a table above the startup threshold, the
 * online build by one node after startup, once that node's first load pass is over, so that the loader's open
 * transactions do not hold the metadata lock the build needs. (On an empty database Keycloak's own first schema creation is not safe for
 * simultaneous starts, so the cluster is created once before.)
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MariaDbIT {

    private static final int SESSIONS = 30;
    /** Above the changelog's startup limit of 300,000 rows. */
    private static final int BULK_SESSIONS = 400_000;
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

    private static List<String> indexes() {
        return Sql.column(cluster, "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS"
                + " WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME LIKE 'OFFPRELOAD%' ORDER BY 1");
    }

    @Test
    @Order(1)
    void theIndexesExistAndTheirChangesetsRanOnce() {
        assertThat(indexes()).containsExactly("OFFPRELOAD_USS_EXPIRY_CREATED", "OFFPRELOAD_USS_EXPIRY_REFRESH");
        assertThat(changesetsBefore).extracting(row -> row.split("\\|")[0] + "|" + row.split("\\|")[1])
                .containsExactly("offpreload-1-uss-expiry-refresh|EXECUTED", "offpreload-2-uss-expiry-created|EXECUTED");
        assertThat(changesets()).as("after all nodes restarted at once").isEqualTo(changesetsBefore);
    }

    @Test
    @Order(1)
    void offlineSessionsArePreloadedAfterTheRestart() {
        await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                .until(() -> cluster.nodes().stream().allMatch(n -> NodeMetrics.scrape(n).preloadState("done"))
                        && cluster.nodes().stream().mapToLong(n -> NodeMetrics.scrape(n).entries("offlineSessions")).sum() == SESSIONS);
        for (int i = 0; i < SESSIONS; i += 7) {
            KeycloakNode node = cluster.node(1 + i % 3);
            assertThat(new OidcClient(node).refresh(tokens.get(i).refreshToken()).status()).as(node.name()).isEqualTo(200);
        }
    }


    private static long nodesLogging(String text) {
        return cluster.nodes().stream().filter(n -> n.log().linesSinceStart().stream().anyMatch(l -> l.contains(text))).count();
    }

    @Test
    @Order(2)
    void onALargeTableOneNodeBuildsTheIndexesOnlineAfterStartup() {
        cluster.nodes().forEach(KeycloakNode::stop);
        // Copies of a real offline session, with fresh ids: too many rows to index at startup.
        Sql.execute(cluster, "INSERT INTO OFFLINE_USER_SESSION (USER_SESSION_ID, USER_ID, REALM_ID, CREATED_ON, OFFLINE_FLAG,"
                + " DATA, LAST_SESSION_REFRESH, BROKER_SESSION_ID, VERSION, REMEMBER_ME)"
                + " SELECT CONCAT('bulk-', s.seq), t.USER_ID, t.REALM_ID, t.CREATED_ON, '1', t.DATA, t.LAST_SESSION_REFRESH,"
                + " t.BROKER_SESSION_ID, t.VERSION, t.REMEMBER_ME FROM OFFLINE_USER_SESSION t JOIN seq_1_to_" + BULK_SESSIONS
                + " s WHERE t.USER_SESSION_ID = '" + tokens.get(0).sessionId() + "' AND t.OFFLINE_FLAG = '1'");
        Sql.execute(cluster, "DROP INDEX OFFPRELOAD_USS_EXPIRY_REFRESH ON OFFLINE_USER_SESSION");
        Sql.execute(cluster, "DROP INDEX OFFPRELOAD_USS_EXPIRY_CREATED ON OFFLINE_USER_SESSION");
        Sql.execute(cluster, "DELETE FROM DATABASECHANGELOG_OFFPRELOAD");

        Startables.deepStart(cluster.nodes()).join(); // all at once: all try to build
        cluster.awaitView(3);
        await("both changesets recorded").atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofSeconds(1))
                .until(() -> changesets().size() == 2);

        assertThat(indexes()).containsExactly("OFFPRELOAD_USS_EXPIRY_CREATED", "OFFPRELOAD_USS_EXPIRY_REFRESH");
        assertThat(changesets()).extracting(row -> row.split("\\|")[0] + "|" + row.split("\\|")[1])
                .containsExactly("offpreload-1-uss-expiry-refresh|MARK_RAN", "offpreload-2-uss-expiry-created|MARK_RAN");
        for (String index : List.of("OFFPRELOAD_USS_EXPIRY_REFRESH", "OFFPRELOAD_USS_EXPIRY_CREATED")) {
            String building = "Offline-session index " + index + ": building on node";
            assertThat(nodesLogging(building)).as("nodes that built %s", index).isEqualTo(1);
            String line = cluster.nodes().stream().flatMap(n -> n.log().linesSinceStart().stream())
                    .filter(l -> l.contains(building)).findFirst().orElseThrow();
            assertThat(line).as("in the background, online").contains("(offpreload-index-build)")
                    .contains("ALGORITHM=INPLACE LOCK=NONE");
        }
        // The loader's open transactions would hold the table's metadata lock the build needs: the building node
        // starts it only after its own first pass.
        KeycloakNode builder = cluster.nodes().stream().filter(n -> n.log().linesSinceStart().stream()
                .anyMatch(l -> l.contains("building on node"))).findFirst().orElseThrow();
        List<String> log = builder.log().linesSinceStart();
        assertThat(indexOf(log, "Offline session preload on " + builder.name() + " finished in"))
                .as("the pass ended before the build began").isLessThan(indexOf(log, "building on node"));
        assertThat(cluster.nodes().stream().flatMap(n -> n.log().linesSinceStart().stream()))
                .noneMatch(l -> l.contains("the online build failed"));

        cluster.node(2).restart();
        cluster.node(2).awaitLogLine("Offline-session indexes: all built and recorded", Duration.ofMinutes(1));
        assertThat(cluster.node(2).log().linesSinceStart()).as("a later start finds nothing to do")
                .noneMatch(l -> l.contains("building on node") || l.contains("is missing"));
    }
}
