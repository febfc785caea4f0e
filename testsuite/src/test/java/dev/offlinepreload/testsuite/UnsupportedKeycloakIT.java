package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.regex.Pattern;

import dev.offlinepreload.testsuite.cluster.Images;
import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.keycloak.admin.client.Keycloak;

/**
 * This jar installed on a Keycloak it does not support: a real 2-node cluster of Keycloak 26.3.5 (below the range
 * this project aims at, 26.4–26.7, so the test stays valid as minors are added; its dist is on Maven Central), the
 * jar copied into providers/ and the server built at startup ({@code kc.sh start}), as an operator who drops in the
 * wrong release would. The build leaves the jar out with one line saying why; the nodes start, form their cluster
 * and serve sessions as stock Keycloak: the user-sessions provider is the built-in one, this jar's changelog does
 * not run, and login, refresh on the other node, revocation and an admin's sign-out of an offline session work.
 */
class UnsupportedKeycloakIT {

    static final String VERSION = "26.3.5";
    /** A log entry at level ERROR from a logger that is not the clustering's (JGroups, Keycloak's JGroups protocols). */
    private static final Pattern NON_CLUSTERING_ERROR =
            Pattern.compile("^\\d{4}-\\d\\d-\\d\\d \\S+ ERROR +\\[(?!org\\.jgroups\\.|org\\.keycloak\\.jgroups\\.)");
    private static KeycloakCluster cluster;

    @BeforeAll
    static void startWithTheJarOfAnotherMinor() {
        cluster = KeycloakCluster.builder(UnsupportedKeycloakIT.class.getSimpleName()).nodes(2)
                .buildAtStartup(Images.keycloak(VERSION))
                .build().start();
        TestRealm.create(cluster.node(1), 3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theBuildLeavesTheJarOutWithOneLineSayingWhy() {
        for (KeycloakNode node : cluster.nodes()) {
            assertThat(node.log().lines().stream().filter(l -> l.contains("Offline session preloader left out of this build")))
                    .as(node.name()).singleElement().satisfies(line -> assertThat(line)
                            .contains("WARN")
                            .contains("this is Keycloak " + VERSION + " and this jar supports Keycloak 26.4.x, 26.5.x, 26.6.x and 26.7.x")
                            .contains("install the release of this provider that supports Keycloak 26.3"));
            // Stock 26.3's clustering logs ERRORs of its own while nodes form the cluster (JGroups' "failed sending
            // message to node2: Socket is closed", KEYCLOAK_JDBC_PING2's "duplicate key value violates unique
            // constraint", each seen in CI), so the test asks what is this jar's: no line but the one above names it,
            // in a message or a stack trace, and no ERROR comes from anything but the clustering.
            assertThat(node.log().lines()).as(node.name())
                    .noneMatch(l -> l.contains("Offline session preloader active"))
                    .noneMatch(l -> l.contains("dev.offlinepreload") && !l.contains("left out of this build"))
                    .noneMatch(l -> NON_CLUSTERING_ERROR.matcher(l).find());
        }
    }

    @Test
    void theServerIsStock() throws SQLException {
        for (KeycloakNode node : cluster.nodes()) {
            try (Keycloak admin = TestRealm.admin(node)) {
                assertThat(admin.serverInfo().getInfo().getSystemInfo().getVersion()).isEqualTo(VERSION);
                var userSessions = admin.serverInfo().getInfo().getProviders().get("userSessions");
                assertThat(userSessions.getProviders()).as(node.name()).containsKey("infinispan")
                        .doesNotContainKey("offline-preload");
            }
        }
        try (Connection c = cluster.database().createConnection("");
             ResultSet tables = c.getMetaData().getTables(null, null, "databasechangelog_offpreload", null)) {
            assertThat(tables.next()).as("this jar's changelog table").isFalse();
        }
    }

    @Test
    void loginRefreshOnTheOtherNodeRevocationAndAdminSignOutWorkAsStock() {
        TokenResponse login = new OidcClient(cluster.node(1)).offlineLogin(TestRealm.username(1), "password");
        assertThat(login.status()).as("%s", login).isEqualTo(200);
        assertThat(login.refreshTokenType()).isEqualTo("Offline");
        TokenResponse refreshed = new OidcClient(cluster.node(2)).refresh(login.refreshToken());
        assertThat(refreshed.status()).as("%s", refreshed).isEqualTo(200);
        assertThat(new OidcClient(cluster.node(2)).revoke(refreshed.refreshToken())).isEqualTo(200);
        assertThat(new OidcClient(cluster.node(1)).refresh(refreshed.refreshToken()).status()).isEqualTo(400);

        TokenResponse other = new OidcClient(cluster.node(2)).offlineLogin(TestRealm.username(2), "password");
        assertThat(other.status()).as("%s", other).isEqualTo(200);
        try (Keycloak admin = TestRealm.admin(cluster.node(1))) {
            admin.realm(TestRealm.REALM).deleteSession(other.sessionId(), true); // an admin signs the offline session out
        }
        assertThat(new OidcClient(cluster.node(2)).refresh(other.refreshToken()).status()).isEqualTo(400);
    }
}
