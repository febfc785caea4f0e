package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder.Realm;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder.Seeded;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import dev.offlinepreload.testsuite.keycloak.TokenMinter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.keycloak.admin.client.Keycloak;

/**
 * The benchmark's data seeder writes exactly the shape it is asked for, and Keycloak reads what it wrote: every valid
 * clone loads, the corrupt ones are skipped, the expired ones are never planned; and offline tokens minted for seeded
 * sessions with the realm's keys refresh and read as real ones, and are refused as real ones are.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SeederIT {

    private static final int SESSIONS = 5000;
    private static final SeedShape SHAPE = new SeedShape(SESSIONS, 2, 3, 0.10, 0.02, 3 * 24 * 3600);

    private static KeycloakCluster cluster;
    private static Realm first;
    private static Realm second;
    private static Seeded seeded;

    @BeforeAll
    static void seedTwoRealms() {
        cluster = KeycloakCluster.builder(SeederIT.class.getSimpleName()).nodes(1)
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", "20000")
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", "40000")
                .build().start();
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            first = seeder.createRealm(cluster.node(1), "seed-a", 2, 20);
            second = seeder.createRealm(cluster.node(1), "seed-b", 3, 30);
            // as when the code exchange comes a second after the login: the offline sessions' creation time is then
            // not the authentication time in their DATA, and the copies must still get their own times
            Sql.execute(cluster, "UPDATE offline_user_session SET created_on = created_on + 1 WHERE user_session_id IN ("
                    + quoted(second.templateSessionIds()) + ")");
            seeded = seeder.seed(first, SHAPE);
            Seeded again = seeder.seed(second, SHAPE);
            assertThat(again).isEqualTo(seeded);
        }
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void writesTheAskedShape() {
        // exact shares per 10,000 sessions; 5,000 is half a cycle, so within a few rows
        assertThat(seeded.expired()).isBetween(495, 505);
        assertThat(seeded.corrupt()).isBetween(95, 105);
        assertThat(seeded.clientSessions()).isEqualTo(2 * SESSIONS);
        for (Realm realm : List.of(first, second)) {
            String inRealm = " FROM offline_user_session WHERE offline_flag = '1' AND realm_id = '" + realm.id() + "'"
                    + " AND user_session_id NOT IN (" + quoted(realm.templateSessionIds()) + ")";
            int now = (int) (System.currentTimeMillis() / 1000);
            assertThat(count("SELECT count(*)" + inRealm)).isEqualTo(SESSIONS);
            assertThat(count("SELECT count(*)" + inRealm + " AND last_session_refresh < "
                    + (now - SeedShape.OFFLINE_IDLE_TIMEOUT_SECONDS))).isEqualTo(seeded.expired());
            assertThat(count("SELECT count(*)" + inRealm + " AND data = '{\"corrupt'")).isEqualTo(seeded.corrupt());
            // valid sessions' last refresh spread over the 3 days before now
            assertThat(count("SELECT min(last_session_refresh)" + inRealm + " AND data <> '{\"corrupt'"
                    + " AND last_session_refresh >= " + (now - SeedShape.OFFLINE_IDLE_TIMEOUT_SECONDS)))
                    .isBetween(now - 3L * 24 * 3600, now - 3L * 24 * 3600 + 3600);
            // DATA holds each copy's own creation time where the template held a time (the notes' start and
            // authentication times)
            String validInRealm = inRealm + " AND data <> '{\"corrupt'";
            assertThat(count("SELECT count(*)" + validInRealm + " AND data LIKE '%' || created_on || '%'"))
                    .isEqualTo(SESSIONS - seeded.corrupt());
            assertThat(count("SELECT count(DISTINCT data)" + validInRealm))
                    .isEqualTo(count("SELECT count(DISTINCT created_on)" + validInRealm));
            assertThat(count("SELECT count(*) FROM offline_client_session c JOIN offline_user_session u"
                    + " ON u.user_session_id = c.user_session_id AND u.offline_flag = '1'"
                    + " WHERE u.realm_id = '" + realm.id() + "' AND c.offline_flag = '1' AND u.data <> '{\"corrupt'"
                    + " AND u.user_session_id NOT IN (" + quoted(realm.templateSessionIds()) + ")"
                    + " AND c.data LIKE '%' || u.created_on || '%'"))
                    .isEqualTo(2L * (SESSIONS - seeded.corrupt()));
            // sessions per user: 3 consecutive ones share a user, users round-robin
            assertThat(count("SELECT count(DISTINCT user_id)" + inRealm))
                    .isEqualTo(count("SELECT count(*) FROM user_entity WHERE realm_id = '" + realm.id() + "'"));
            assertThat(count("SELECT count(*) FROM offline_client_session c JOIN offline_user_session u"
                    + " ON u.user_session_id = c.user_session_id AND u.offline_flag = '1'"
                    + " WHERE u.realm_id = '" + realm.id() + "' AND c.offline_flag = '1'"
                    + " AND u.user_session_id NOT IN (" + quoted(realm.templateSessionIds()) + ")"))
                    .isEqualTo(2L * SESSIONS);
        }
    }

    @Test
    @Order(2) // restarts the node
    void keycloakLoadsEveryValidCloneAndSkipsTheCorruptOnes() {
        cluster.restartAll();
        await("first pass done").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500))
                .until(() -> NodeMetrics.scrape(cluster.node(1)).preloadState("done"));
        NodeMetrics metrics = NodeMetrics.scrape(cluster.node(1));
        int templates = first.templateSessionIds().size() + second.templateSessionIds().size();
        assertThat(metrics.preloaded("loaded")).isEqualTo(2L * seeded.valid() + templates);
        assertThat(metrics.preloaded("skipped")).isEqualTo(2L * seeded.corrupt());
        assertThat(metrics.preloaded("failed")).isZero();
        assertThat((long) metrics.value("keycloak_offline_preload_client_sessions_total"))
                .isEqualTo(2L * 2 * seeded.valid() + templates);
        assertThat(metrics.entries("offlineSessions")).isEqualTo(2L * seeded.valid() + templates);
    }

    @Test
    @Order(3)
    void mintedOfflineTokensOfSeededSessionsRefreshAndReadAsRealOnes() {
        OidcClient app = new OidcClient(cluster.node(1), first.name(), "app-1");
        TestRealm.addResourceServer(cluster.node(1), first.name(), "app-1");
        TokenResponse template = app.offlineLogin(TestRealm.username(1), "password");
        assertThat(template.status()).as("%s", template).isEqualTo(200);
        TokenMinter minter = new TokenMinter(cluster, first.name(), template);
        String context = jti(template.accessToken()).substring(0, jti(template.accessToken()).indexOf(':') + 1);
        assertThat(context).as("the context prefix of Keycloak's own token id").startsWith("of");
        List<String> ids = Sql.column(cluster, "SELECT user_session_id FROM offline_user_session WHERE offline_flag = '1'"
                + " AND realm_id = '" + first.id() + "' AND data <> '{\"corrupt' AND last_session_refresh >= "
                + (System.currentTimeMillis() / 1000 - SeedShape.OFFLINE_IDLE_TIMEOUT_SECONDS + 3600)
                + " AND user_session_id NOT IN (" + quoted(first.templateSessionIds()) + ") ORDER BY user_session_id LIMIT 20");
        List<TokenMinter.Minted> minted = minter.mint(cluster, first.name(), ids);
        for (TokenMinter.Minted tokens : minted) {
            TokenResponse refreshed = app.refresh(tokens.refreshToken());
            assertThat(refreshed.status()).as("refresh of seeded session %s: %s", tokens.sessionId(), refreshed).isEqualTo(200);
            assertThat(refreshed.sessionId()).isEqualTo(tokens.sessionId());
            assertThat(app.userinfo(tokens.accessToken())).as("userinfo of seeded session %s", tokens.sessionId()).isEqualTo(200);
            TokenResponse introspected = app.introspect(tokens.accessToken(), TestRealm.RESOURCE_SERVER, TestRealm.RESOURCE_SERVER_SECRET);
            assertThat(introspected.active()).as("introspection of seeded session %s: %s", tokens.sessionId(), introspected).isTrue();
            // The same context as Keycloak's own token ("of...:"), so Keycloak looks among the offline sessions only.
            assertThat(jti(tokens.accessToken())).startsWith(context);
        }
        // Keycloak checks them as its own: a wrong signature, and a session that is gone, are refused.
        String forged = minted.get(0).refreshToken();
        forged = forged.substring(0, forged.lastIndexOf('.') + 1) + "AAAA" + forged.substring(forged.lastIndexOf('.') + 5);
        assertThat(app.refresh(forged).status()).as("a token with another signature").isEqualTo(400);
        TokenMinter.Minted gone = minted.get(1);
        try (Keycloak admin = TestRealm.admin(cluster.node(1))) {
            admin.realm(first.name()).deleteSession(gone.sessionId(), true);
        }
        assertThat(app.refresh(gone.refreshToken()).status()).as("refresh of a deleted session").isEqualTo(400);
        assertThat(app.userinfo(gone.accessToken())).as("userinfo of a deleted session").isEqualTo(401);
        assertThat(app.introspect(gone.accessToken(), TestRealm.RESOURCE_SERVER, TestRealm.RESOURCE_SERVER_SECRET).active())
                .as("introspection of a deleted session").isFalse();
    }

    private static String jti(String jwt) {
        return TokenResponse.claims(jwt).path("jti").asText();
    }

    private static long count(String sql) {
        return Long.parseLong(Sql.column(cluster, sql).get(0));
    }

    private static String quoted(List<String> ids) {
        return String.join(", ", ids.stream().map(id -> "'" + id + "'").toList());
    }
}
