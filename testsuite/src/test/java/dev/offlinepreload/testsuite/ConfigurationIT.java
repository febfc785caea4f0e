package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.keycloak.admin.client.Keycloak;

/** Options reach the provider from keycloak.conf and from the environment; a bad value never takes a node down. */
class ConfigurationIT {

    private static KeycloakCluster cluster;

    @BeforeAll
    static void startWithConfiguration() {
        cluster = KeycloakCluster.builder(ConfigurationIT.class.getSimpleName()).nodes(2)
                .keycloakConf("spi-user-sessions--offline-preload--batch-size=250\n"
                        + "spi-user-sessions--offline-preload--participating-nodes=node1, node2\n")
                .env(optionEnv("workers-per-node"), "3")
                .nodeEnv(2, optionEnv("revocation-recheck-seconds"), "soon")
                .build().start();
        TestRealm.create(cluster.node(1), 1);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static Map<String, String> operationalInfo(KeycloakNode node) {
        try (Keycloak admin = TestRealm.admin(node)) {
            return admin.serverInfo().getInfo().getProviders().get("userSessions").getProviders()
                    .get("offline-preload").getOperationalInfo();
        }
    }

    @Test
    void valuesFromKeycloakConfAndEnvironmentAreInEffect() {
        Map<String, String> info = operationalInfo(cluster.node(1));
        assertThat(info).containsEntry("batch-size", "250")          // keycloak.conf
                .containsEntry("participating-nodes", "node1,node2")  // keycloak.conf, a list
                .containsEntry("workers-per-node", "3")               // environment
                .containsEntry("preloading", "true");
        await().atMost(Duration.ofMinutes(1)).until(() -> NodeMetrics.scrape(cluster.node(1)).preloadState("done"));
    }

    @Test
    void aBadValueIsNamedAndTheNodeKeepsServing() {
        KeycloakNode node2 = cluster.node(2);
        assertThat(node2.log().lines()).anyMatch(l -> l.contains("ERROR")
                && l.contains("Invalid value 'soon' for option spi-user-sessions--offline-preload--revocation-recheck-seconds")
                && l.contains("Offline session preloading and the online index build are off on this node"));
        assertThat(operationalInfo(node2)).containsEntry("preloading", "false");

        TokenResponse login = new OidcClient(node2).offlineLogin(TestRealm.username(1), "password");
        assertThat(login.status()).as("%s", login).isEqualTo(200);
        assertThat(new OidcClient(node2).refresh(login.refreshToken()).status()).isEqualTo(200);
    }
}
