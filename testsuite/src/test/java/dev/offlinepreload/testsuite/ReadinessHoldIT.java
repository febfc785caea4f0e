package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static dev.offlinepreload.testsuite.cluster.NodeLog.indexOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * hold-readiness: startup, and so readiness, waits for the node's first pass, gate included. One node expecting two
 * can only become ready once the gate has timed out (15 s) and the pass has run: its log shows that order, and its
 * /health/ready does not answer 200 while the gate waits, and does once startup has completed.
 */
class ReadinessHoldIT {

    private static KeycloakCluster cluster;

    @BeforeAll
    static void startOneNodeThatExpectsTwo() {
        cluster = KeycloakCluster.builder(ReadinessHoldIT.class.getSimpleName()).nodes(1)
                .env(optionEnv("hold-readiness"), "true")
                .env(optionEnv("expected-cluster-size"), "2")
                .env(optionEnv("join-timeout-seconds"), "15")
                .build().start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }


    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** The status of /health/ready, or 0 when nothing answers (the management interface is not up yet). */
    private static int readiness(KeycloakNode node) {
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create(node.managementUrl() + "/health/ready"))
                    .timeout(Duration.ofSeconds(2)).GET().build();
            return HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void healthReadyAnswersOnlyOnceTheFirstPassIsDone() {
        KeycloakNode node = cluster.node(1);
        node.stopGracefully();
        CompletableFuture<Void> starting = node.startInBackground();
        node.awaitLogLine("startup waits until node node1 has loaded its share", Duration.ofMinutes(3));
        // The gate waits 15 s for a second node from before that line: for 10 s the pass cannot have run.
        await("/health/ready not 200 while the node holds").during(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(12))
                .pollInterval(Duration.ofMillis(500)).until(() -> readiness(node) != 200);
        starting.join();
        assertThat(node.log().linesSinceStart()).anyMatch(l -> l.contains("Offline session preload on node1 finished in"));
        assertThat(readiness(node)).as("/health/ready after startup").isEqualTo(200);
    }

    @Test
    void theNodeBecomesReadyOnlyAfterItsFirstPass() {
        KeycloakNode node = cluster.node(1);
        List<String> log = node.log().linesSinceStart();
        int holding = indexOf(log, "startup waits until node node1 has loaded its share");
        int gaveUpWaiting = indexOf(log, "for 2 nodes, 1 present [node1]; loading with these");
        int passDone = indexOf(log, "Offline session preload on node1 finished in");
        // Readiness ("Keycloak Initialized") follows Keycloak's bootstrap, which runs after HTTP is up in 26.x.
        int bootstrapped = indexOf(log, "Bootstrap completed");
        assertThat(holding).isLessThan(gaveUpWaiting);
        assertThat(gaveUpWaiting).isLessThan(passDone);
        assertThat(passDone).as("bootstrap, and so readiness, completes only after the pass").isLessThan(bootstrapped);
    }
}
