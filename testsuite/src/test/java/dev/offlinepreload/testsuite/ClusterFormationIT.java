package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.keycloak.admin.client.Keycloak;

/** The ground everything else stands on: three real nodes form one cluster, all running this provider. */
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
    void everyNodeLoadedTheChangelogProvider() {
        // Keycloak parses every listed provider's changelog at each start; Liquibase runs it once it has changesets.
        for (KeycloakNode node : cluster.nodes()) {
            try (Keycloak admin = TestRealm.admin(node)) {
                var entityProviders = admin.serverInfo().getInfo().getProviders().get("jpa-entity-provider");
                assertThat(entityProviders.getProviders()).as(node.name()).containsKey("offpreload-indexes");
            }
        }
    }
}
