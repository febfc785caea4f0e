package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.cluster.NodeLog;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.SeedShape;
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
 * Gating and re-warming on one 3-node cluster, scenario after scenario: staggered start, rolling restart, the
 * database paused while loading, and only two of three nodes starting. (A node killed while loading: ClusterRestartIT,
 * at 100,000 sessions with exact counts, on every minor with a server here.)
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterGatingIT {

    private static final int REAL = 12;
    private static final int TOTAL = REAL + 3000;
    private static final String LOADING = "sessions (";   // "loading N sessions (H recently refreshed first; M in the database ..."

    private static KeycloakCluster cluster;
    private static final List<TokenResponse> tokens = new ArrayList<>();

    @BeforeAll
    static void clusterWithSessions() {
        cluster = KeycloakCluster.builder(ClusterGatingIT.class.getSimpleName()).nodes(3)
                .env(optionEnv("expected-cluster-size"), "3")
                .env(optionEnv("join-timeout-seconds"), "300")
                // Small batches, one worker, a rate cap: a load lasts long enough to kill a node or pause the database.
                .env(optionEnv("batch-size"), "10")
                .env(optionEnv("workers-per-node"), "1")
                .env(optionEnv("max-sessions-per-second"), "500")
                .env(optionEnv("revocation-recheck-seconds"), "2")
                .build().start();
        TestRealm.create(cluster.node(1), REAL);
        for (int i = 1; i <= REAL; i++) {
            TokenResponse login = new OidcClient(cluster.node(1)).offlineLogin(TestRealm.username(i), "password");
            assertThat(login.status()).as("%s", login).isEqualTo(200);
            tokens.add(login);
        }
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            seeder.seed(seeder.realm(TestRealm.REALM, List.of(tokens.get(0).sessionId())), new SeedShape(TOTAL - REAL, 1, 1, 0, 0, 3600));
        }
        // The clones are in the database only; the first scenario restarts every node, and they load them.
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Every running node is done and together they hold every session exactly once. */
    private static void awaitWarm(int nodes) {
        await("%d nodes done, %d sessions cached".formatted(nodes, TOTAL)).atMost(Duration.ofMinutes(3))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> cluster.runningNodes().size() == nodes
                        && cluster.runningNodes().stream().allMatch(n -> NodeMetrics.scrape(n).preloadState("done"))
                        && cluster.runningNodes().stream().mapToLong(n -> NodeMetrics.scrape(n).entries("offlineSessions")).sum() == TOTAL);
    }

    private static void assertRefreshesWorkOn(List<KeycloakNode> nodes) {
        for (KeycloakNode node : nodes) {
            for (int i = 0; i < 3; i++) {
                TokenResponse refreshed = new OidcClient(node).refresh(tokens.get(i).refreshToken());
                assertThat(refreshed.status()).as("refresh on %s: %s", node.name(), refreshed).isEqualTo(200);
            }
        }
    }

    private static LocalDateTime firstLoadStart(KeycloakNode node) {
        return node.log().linesSinceStart().stream()
                .filter(l -> l.contains("Offline session preload on " + node.name() + ": loading") && l.contains(LOADING))
                .map(NodeLog::timeOf).findFirst().orElseThrow();
    }

    @Test
    @Order(1)
    void staggeredStartLoadsOnlyOnceTheThirdNodeHasJoined() {
        cluster.nodes().forEach(KeycloakNode::stop);
        cluster.node(1).start();
        cluster.node(1).awaitLogLine("waits for 3 nodes", Duration.ofMinutes(1));
        cluster.node(2).start();
        cluster.node(3).start();
        cluster.awaitView(3);
        LocalDateTime thirdJoined = cluster.node(1).log().linesSinceStart().stream()
                .filter(l -> l.contains("ISPN000094") && l.contains("(3)")).map(NodeLog::timeOf).findFirst().orElseThrow();

        awaitWarm(3);
        for (KeycloakNode node : cluster.nodes()) {
            assertThat(firstLoadStart(node)).as("%s started loading after node3 joined at %s", node.name(), thirdJoined)
                    .isAfterOrEqualTo(thirdJoined);
            assertThat(NodeMetrics.scrape(node).entries("offlineSessions")).as(node.name()).isBetween(TOTAL / 5L, TOTAL / 2L);
        }
    }

    @Test
    @Order(2)
    void rollingRestartLeavesTheCachesWarmAfterEachStep() {
        for (KeycloakNode node : cluster.nodes()) {
            node.restart();
            cluster.awaitView(3);
            awaitWarm(3);
        }
        assertRefreshesWorkOn(cluster.nodes());
    }

    @Test
    @Order(4)
    void aLoadInterruptedByADatabasePauseCompletesWhenItReturns() throws Exception {
        KeycloakNode node = cluster.node(2);
        node.stop();
        cluster.awaitView(2);
        awaitWarm(2);
        CompletableFuture<Void> starting = node.startInBackground();
        node.awaitLogLine("Offline session preload on node2: loading", Duration.ofMinutes(3));
        cluster.pauseDatabase();
        Thread.sleep(15_000); // far longer than the first retry's back-off
        cluster.unpauseDatabase();
        starting.join();
        cluster.awaitView(3);
        awaitWarm(3);
        assertThat(node.log().linesSinceStart()).noneMatch(l -> l.contains("gave up"));
    }

    @Test
    @Order(5)
    void withOnlyTwoOfThreeTheyLoadAfterTheJoinTimeoutAndTheThirdLoadsLater() {
        cluster.nodes().forEach(KeycloakNode::stop);
        for (KeycloakNode node : cluster.nodes()) {
            node.setEnv(optionEnv("join-timeout-seconds"), "60");
        }
        // One after the other: started at the same moment, jdbc-ping lets each form its own cluster until they merge.
        cluster.node(1).start();
        cluster.node(2).start();
        cluster.awaitView(2);
        awaitWarm(2);
        assertThat(List.of(cluster.node(1), cluster.node(2)).stream().flatMap(n -> n.log().linesSinceStart().stream()))
                .anyMatch(l -> l.contains("waited") && l.contains("for 3 nodes, 2 present") && l.contains("loading with these"));

        cluster.node(3).start();
        cluster.awaitView(3);
        awaitWarm(3);
        assertThat(NodeMetrics.scrape(cluster.node(3)).entries("offlineSessions")).isPositive();
    }
}
