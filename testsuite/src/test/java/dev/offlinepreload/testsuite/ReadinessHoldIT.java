package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * hold-readiness: startup, and so readiness, waits for the node's first pass, gate included. One node expecting two
 * can only become ready once the gate has timed out and the pass has run.
 */
class ReadinessHoldIT {

    private static KeycloakCluster cluster;

    @BeforeAll
    static void startOneNodeThatExpectsTwo() {
        cluster = KeycloakCluster.builder(ReadinessHoldIT.class.getSimpleName()).nodes(1)
                .env("KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__HOLD_READINESS", "true")
                .env("KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__EXPECTED_CLUSTER_SIZE", "2")
                .env("KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__JOIN_TIMEOUT_SECONDS", "15")
                .build().start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        throw new AssertionError("no log line contains '" + text + "'");
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
