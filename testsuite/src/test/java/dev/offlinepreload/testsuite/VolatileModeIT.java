package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static dev.offlinepreload.testsuite.cluster.NodeLog.indexOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Volatile user sessions (persistent-user-sessions disabled): the mode where a warm cache spares the database the
 * most. After a full restart, offline refreshes on every node read neither session table, and each node loaded its
 * hot tier from that tier's own plan before it became ready, and before it planned the rest.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS) // one cluster per class; a subclass on another minor may run beside it
class VolatileModeIT {

    /** The Keycloak version the cluster runs: null for the project's own; a subclass names an older minor. */
    String keycloakVersion() {
        return null;
    }

    private static final int REAL = 20;
    private static final int CLONES = 1000;

    private static final Pattern HOT = Pattern.compile(": first the (\\d+) sessions refreshed within 3600 s");
    private static final Pattern ALREADY_CACHED = Pattern.compile(" owned by this node, (\\d+) already cached");

    private KeycloakCluster cluster;
    private final List<TokenResponse> tokens = new ArrayList<>();

    @BeforeAll
    void restartWithSessionsInTheDatabase() {
        cluster = KeycloakCluster.builder(getClass().getSimpleName()).keycloakVersion(keycloakVersion()).nodes(2)
                .buildOptions("--features-disabled=persistent-user-sessions")
                .pgStatStatements()
                .env(KeycloakCluster.PRELOADING, null) // the shipped default: with volatile sessions it preloads
                // The loader's own delayed existence check reads the session tables by design (ClusterRestartIT covers it);
                // an hour later it cannot land among the refreshes whose reads are counted.
                .env(optionEnv("revocation-recheck-seconds"), "3600")
                .build().start();
        TestRealm.create(cluster.node(1), REAL);
        for (int i = 1; i <= REAL; i++) {
            TokenResponse login = new OidcClient(cluster.node(1 + i % 2)).offlineLogin(TestRealm.username(i), "password");
            assertThat(login.status()).as("%s", login).isEqualTo(200);
            tokens.add(login);
        }
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            seeder.seed(seeder.realm(TestRealm.REALM, List.of(tokens.get(0).sessionId())), new SeedShape(CLONES, 1, 1, 0, 0, 3600));
        }
        Sql.execute(cluster, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        cluster.restartAll();
        await("both nodes loaded").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                .until(() -> cluster.nodes().stream().allMatch(n -> NodeMetrics.scrape(n).preloadState("done"))
                        && cluster.nodes().stream().mapToLong(n -> NodeMetrics.scrape(n).entries("offlineSessions")).sum()
                        == REAL + CLONES);
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void offlineRefreshesAfterARestartReadNoSessionTable() {
        Sql.execute(cluster, "SELECT pg_stat_statements_reset()");
        for (int i = 0; i < REAL; i++) {
            for (KeycloakNode node : cluster.nodes()) {
                TokenResponse refreshed = new OidcClient(node).refresh(tokens.get(i).refreshToken());
                assertThat(refreshed.status()).as("refresh on %s: %s", node.name(), refreshed).isEqualTo(200);
            }
        }
        assertThat(sessionReads()).as("SELECTs on the offline session tables during %d refreshes", 2 * REAL).isZero();

        // Control: the same statistic does see Keycloak reading those tables (the admin API's session count).
        try (var admin = TestRealm.admin(cluster.node(1))) {
            var realm = admin.realm(TestRealm.REALM);
            String clientUuid = realm.clients().findByClientId(TestRealm.CLIENT_ID).get(0).getId();
            assertThat(realm.clients().get(clientUuid).getOfflineSessionCount().get("count")).isPositive();
        }
        assertThat(sessionReads()).as("SELECTs on the offline session tables after the admin count").isPositive();
    }

    private long sessionReads() {
        return Sql.number(cluster, "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements"
                + " WHERE query ILIKE 'select%' AND query NOT ILIKE '%pg_stat_statements%'"
                + " AND (query ILIKE '%offline_user_session%' OR query ILIKE '%offline_client_session%')");
    }

    @Test
    void refreshesAreCacheHits() {
        long misses = cluster.nodes().stream().mapToLong(n -> NodeMetrics.scrape(n).misses("offlineSessions")).sum();
        for (int i = 0; i < REAL; i++) {
            assertThat(new OidcClient(cluster.node(1 + i % 2)).refresh(tokens.get(i).refreshToken()).status()).isEqualTo(200);
        }
        long after = cluster.nodes().stream().mapToLong(n -> NodeMetrics.scrape(n).misses("offlineSessions")).sum();
        assertThat(after - misses).as("offlineSessions misses").isZero();
    }

    @Test
    void eachNodeLoadedItsHotTierFirstAndTheRestCountedItAsCached() {
        long hot = 0;
        for (KeycloakNode node : cluster.nodes()) {
            List<String> lines = node.log().linesSinceStart();
            String prefix = "Offline session preload on " + node.name();
            int hotStart = indexOf(lines, prefix + ": first the ");
            int restStart = indexOf(lines, prefix + ": loading ");
            assertThat(restStart).as("%s planned the rest after its hot tier", node.name()).isGreaterThan(hotStart);
            long nodeHot = group(HOT, lines.get(hotStart));
            assertThat(group(ALREADY_CACHED, lines.get(restStart)))
                    .as("%s: the rest's plan counts the hot tier as cached: %s", node.name(), lines.get(restStart))
                    .isGreaterThanOrEqualTo(nodeHot);
            hot += nodeHot;
        }
        assertThat(hot).as("sessions of the hot tiers (the %d logged in just before the restart among them)", REAL)
                .isGreaterThanOrEqualTo(REAL);
    }

    @Test
    void eachNodeBecameReadyOnlyOnceItsHotTierWasLoaded() {
        for (KeycloakNode node : cluster.nodes()) {
            List<String> lines = node.log().linesSinceStart();
            String name = node.name();
            int holding = indexOf(lines, "startup waits until node " + name + " has loaded its recently refreshed sessions");
            int hotLoaded = indexOf(lines, "Offline session preload on " + name + " loaded its recently refreshed sessions first");
            int released = indexOf(lines, "startup of node " + name + " goes on after");
            int bootstrapped = indexOf(lines, node.servingLine());
            assertThat(holding).as("%s: startup held (hold-readiness=auto)", name).isLessThan(hotLoaded);
            assertThat(hotLoaded).as("%s: released once the hot tier was in", name).isLessThan(released);
            assertThat(released).as("%s: bootstrap, and so readiness, after the hot tier", name).isLessThan(bootstrapped);
        }
    }


    private static long group(Pattern pattern, String line) {
        Matcher m = pattern.matcher(line);
        assertThat(m.find()).as("%s in %s", pattern, line).isTrue();
        return Long.parseLong(m.group(1));
    }
}
