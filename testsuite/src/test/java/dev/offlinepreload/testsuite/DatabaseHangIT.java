package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A database that hangs (the container paused: no error, no answer) while a node plans its first pass, with
 * hold-readiness=true so that startup waits for that pass. Each loader statement must fail after
 * database-timeout-seconds instead of waiting for the database, and a SIGTERM meanwhile must stop the loader within
 * that timeout and let the node shut down; once the database is back, a fresh start loads every session. Before the
 * statements had timeouts, the planning statement waited as long as the database hung, and startup with it.
 */
class DatabaseHangIT {

    private static final int TIMEOUT_SECONDS = 5;

    private static KeycloakCluster cluster;
    private static long sessionRows;

    @BeforeAll
    static void sessionsOnOneNodeThatHoldsItsStartup() {
        cluster = KeycloakCluster.builder(DatabaseHangIT.class.getSimpleName()).nodes(1)
                .env(optionEnv("hold-readiness"), "true")
                // The gate waits 15 s for a second node that never comes: time to pause the database before planning.
                .env(optionEnv("expected-cluster-size"), "2")
                .env(optionEnv("join-timeout-seconds"), "15")
                .env(optionEnv("database-timeout-seconds"), Integer.toString(TIMEOUT_SECONDS))
                // Retries do not end the pass in this test: only the statement timeouts and the shutdown can.
                .env(optionEnv("database-retry-seconds"), "3600")
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", "100000")
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", "300000")
                .build().start();
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            OfflineSessionSeeder.Realm realm = seeder.createRealm(cluster.node(1), "hang", 3, 1000);
            seeder.seed(realm, new SeedShape(50_000, 3, 1, 0, 0, 3600));
        }
        sessionRows = Long.parseLong(Sql.column(cluster, "SELECT count(*) FROM offline_user_session WHERE offline_flag = '1'").get(0));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.unpauseDatabaseIfPaused();
            cluster.close();
        }
    }

    @Test
    void aHungDatabaseFailsTheStatementsAndASigtermStopsTheLoaderAndTheNode() {
        KeycloakNode node = cluster.node(1);
        node.stopGracefully();
        // The start is stopped before it is ready: its wait fails after this timeout instead of 5 minutes.
        node.startupTimeout(Duration.ofMinutes(2));
        CompletableFuture<Void> starting = node.startInBackground();
        node.awaitLogLine("startup waits until node node1 has loaded its share", Duration.ofMinutes(3));
        cluster.pauseDatabase();

        // The gate gives up waiting after 15 s; the key stream then meets the paused database, and its statement
        // fails after the timeout (5 s, and 5 s more for the connection's read timeout) instead of hanging.
        node.awaitLogLine("reading the session ids failed (attempt 1)", Duration.ofSeconds(15 + 3 * TIMEOUT_SECONDS + 30));
        assertThat(starting).as("startup is still held: the pass retries").isNotDone();

        node.terminate();
        // The shutdown hook stops the loader at once; a statement in flight ends within its timeout.
        node.awaitLogLine("Offline session preload on node1 stopped: the node is shutting down",
                Duration.ofSeconds(2 * TIMEOUT_SECONDS + 20));
        assertThat(node.log().linesSinceStart()).noneMatch(l -> l.contains("did not stop within"));

        // Keycloak's own shutdown (leaving the cluster, deleting its discovery row) needs the database.
        cluster.unpauseDatabase();
        await("node1 exits by itself").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(1))
                .until(() -> !node.containerRunning());
        starting.exceptionally(stoppedBeforeReady -> null).join();
        node.stop();
        node.startupTimeout(Duration.ofMinutes(5));

        node.start(); // the database answers again: held startup, then a full load
        assertThat(node.log().linesSinceStart()).anyMatch(l -> l.contains("Offline session preload on node1 finished in"));
        assertThat(NodeMetrics.scrape(node).entries("offlineSessions")).as("sessions cached").isEqualTo(sessionRows);
    }
}
