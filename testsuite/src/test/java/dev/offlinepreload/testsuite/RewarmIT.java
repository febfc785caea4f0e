package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.function.ToLongFunction;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Re-warming with sessions of three client sessions each: after a full restart, after a node paused past failure
 * detection merges back, and after a node killed mid-load and its return, the nodes' caches together hold exactly the
 * loadable rows of both tables. Before the pass waited for both offline caches to settle, client sessions put while
 * offlineClientSessions still rebalanced were dropped, and no later pass repaired them.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RewarmIT {

    private static final String PRELOAD = "KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__";
    private static final int SESSIONS = 6000;
    private static final int CLIENT_SESSIONS_PER_SESSION = 3;

    private static KeycloakCluster cluster;
    private static long sessionRows;
    private static long clientSessionRows;

    @BeforeAll
    static void sessionsOfThreeAppsEach() {
        cluster = KeycloakCluster.builder(RewarmIT.class.getSimpleName()).nodes(3)
                .env(PRELOAD + "EXPECTED_CLUSTER_SIZE", "3")
                .env(PRELOAD + "BATCH_SIZE", "100")
                .env(PRELOAD + "WORKERS_PER_NODE", "1")
                // A load lasts a few seconds: long enough to kill a node in the middle of it.
                .env(PRELOAD + "MAX_SESSIONS_PER_SECOND", "1000")
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", "50000")
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", "100000")
                .build().start();
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            OfflineSessionSeeder.Realm realm = seeder.createRealm(cluster.node(1), "rewarm", CLIENT_SESSIONS_PER_SESSION, 200);
            seeder.seed(realm, new SeedShape(SESSIONS, CLIENT_SESSIONS_PER_SESSION, 1, 0, 0, 3600));
        }
        sessionRows = count("SELECT count(*) FROM offline_user_session WHERE offline_flag = '1'");
        clientSessionRows = count("SELECT count(*) FROM offline_client_session WHERE offline_flag = '1'");
        assertThat(clientSessionRows).as("client session rows").isGreaterThanOrEqualTo(3L * SESSIONS);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static long count(String sql) {
        return Long.parseLong(Sql.column(cluster, sql).get(0));
    }

    private static long sum(ToLongFunction<NodeMetrics> metric) {
        return cluster.runningNodes().stream().mapToLong(n -> metric.applyAsLong(NodeMetrics.scrape(n))).sum();
    }

    /** Every running node is done, and the caches together hold exactly the rows of both tables. */
    private static void awaitExactlyTheDatabase(int nodes) {
        await("%d nodes done holding %d sessions and %d client sessions".formatted(nodes, sessionRows, clientSessionRows))
                .atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                .until(() -> cluster.runningNodes().size() == nodes
                        && cluster.runningNodes().stream().allMatch(n -> NodeMetrics.scrape(n).preloadState("done"))
                        && sum(m -> m.entries("offlineSessions")) == sessionRows
                        && sum(m -> m.entries("offlineClientSessions")) == clientSessionRows);
        // Stays so: nothing is dropped after the passes are over.
        await().pollDelay(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10)).until(() -> true);
        assertThat(sum(m -> m.entries("offlineSessions"))).as("offlineSessions over all nodes").isEqualTo(sessionRows);
        assertThat(sum(m -> m.entries("offlineClientSessions"))).as("offlineClientSessions over all nodes")
                .isEqualTo(clientSessionRows);
    }

    @Test
    @Order(1)
    void aFullRestartLoadsEverySessionAndClientSession() {
        cluster.restartAll();
        cluster.awaitView(3);
        awaitExactlyTheDatabase(3);
    }

    @Test
    @Order(2)
    void aNodePausedPastFailureDetectionMergesBackWithNothingMissing() {
        KeycloakNode paused = cluster.node(3);
        List<KeycloakNode> others = List.of(cluster.node(1), cluster.node(2));
        paused.pause();
        try {
            await("the others see a view of 2").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                    .until(() -> others.stream().allMatch(n -> n.viewSize() == 2));
        } finally {
            paused.unpause();
        }
        await("the partitions merged: every node sees 3").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                .until(() -> cluster.nodes().stream().allMatch(n -> n.viewSize() == 3));
        awaitExactlyTheDatabase(3);
    }

    @Test
    @Order(3)
    void aNodeKilledMidLoadAndItsReturnLeaveNothingMissing() {
        KeycloakNode victim = cluster.node(2);
        victim.stopGracefully();
        cluster.awaitView(2);
        awaitExactlyTheDatabase(2);

        victim.startAndKillOn("Offline session preload on node2: loading");
        List<KeycloakNode> survivors = List.of(cluster.node(1), cluster.node(3));
        await("survivors see a view of 2").atMost(Duration.ofMinutes(2))
                .until(() -> survivors.stream().allMatch(n -> n.viewSize() == 2));
        awaitExactlyTheDatabase(2);

        victim.start();
        cluster.awaitView(3);
        awaitExactlyTheDatabase(3);
    }
}
