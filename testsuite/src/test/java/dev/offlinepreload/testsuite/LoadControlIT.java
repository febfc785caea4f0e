package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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
import org.junit.jupiter.api.parallel.Isolated;

/**
 * adaptive-load and the hot tier at their defaults, as behaviours: the sessions refreshed recently (the real offline
 * tokens; the seeded ones were last refreshed over the past week) are cached first, long before the load is done;
 * while the node loads, real token refreshes at work on it bring the load limit below what it is with no request at
 * work; with steady-traffic-percent set, a refresh every 200 ms, which the node keeps up with but which never leaves
 * it a quiet second, gets the load a share of at most that and the load moves on; when the refreshes stop, the limit
 * goes back up; the load completes.
 * <p>
 * Runs alone: its refreshes must land early in a capped load, which another class's cluster on the same CPUs would
 * stretch or squeeze.
 */
@Isolated
class LoadControlIT {

    private static final String REALM = "control";
    private static final String APP = "app-1";
    private static final int TOKENS = 20;
    private static final int CALLERS = 8;
    private static final int WORKERS = 4;
    private static final int BATCH = 1000;
    /** steady-traffic-percent=25 (the default is 0), as the gauge shows it: one worker at most a quarter of the time. */
    private static final double STEADY_SHARE = 0.25;
    private static final Pattern HOT = Pattern.compile("loading (\\d+) sessions \\((\\d+) recently refreshed first;");

    private static KeycloakCluster cluster;
    private static final List<TokenResponse> tokens = new ArrayList<>();
    private static long sessionRows;

    @BeforeAll
    static void sessionsAndRealOfflineTokens() {
        cluster = KeycloakCluster.builder(LoadControlIT.class.getSimpleName()).nodes(1).heap("-Xms512m -Xmx1g")
                // The cap makes the load last over a minute at full speed: time to send requests while it runs.
                .env(optionEnv("max-sessions-per-second"), "3000")
                .env(optionEnv("workers-per-node"), Integer.toString(WORKERS))
                .env(optionEnv("steady-traffic-percent"), "25")
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", "300000")
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", "300000")
                .build().start();
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            OfflineSessionSeeder.Realm realm = seeder.createRealm(cluster.node(1), REALM, 1, TOKENS + 1);
            for (int i = 0; i < TOKENS; i++) {
                TokenResponse login = new OidcClient(cluster.node(1), REALM, APP).offlineLogin(TestRealm.username(i + 2), "password");
                assertThat(login.refreshTokenType()).as("%s", login).isEqualTo("Offline");
                tokens.add(login);
            }
            seeder.seed(realm, new SeedShape(200_000, 1, 1, 0, 0, 7 * 24 * 3600));
        }
        sessionRows = Long.parseLong(Sql.column(cluster, "SELECT count(*) FROM offline_user_session WHERE offline_flag = '1'").get(0));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static double limit(KeycloakNode node) {
        return NodeMetrics.scrape(node).value("keycloak_offline_preload_load_limit");
    }

    @Test
    void theRecentlyRefreshedAreCachedFirstAndRefreshesAtWorkLowerTheLoadLimitWhichRisesAgainWhenTheyStop() throws Exception {
        KeycloakNode node = cluster.node(1);
        node.restart(); // ready while its load runs

        Matcher start = HOT.matcher(node.awaitLogLine("recently refreshed first", Duration.ofMinutes(2)));
        assertThat(start.find()).isTrue();
        long planned = Long.parseLong(start.group(1));
        long hot = Long.parseLong(start.group(2));
        // The real tokens, and the seeded sessions of the last hour: about 1/168 of them.
        assertThat(hot).isBetween((long) TOKENS, (long) TOKENS + 200_000 / 168 * 2);
        // A few batches past the hot tier (at 3,000 sessions/s the tail takes over a minute): in key order, most
        // of the 20 sessions would still be missing now.
        await("the hot tier loaded").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> NodeMetrics.scrape(node).preloaded("loaded") >= hot + WORKERS * BATCH);
        long missesBefore = NodeMetrics.scrape(node).misses("offlineSessions");
        long loaded = NodeMetrics.scrape(node).preloaded("loaded");
        for (TokenResponse token : tokens) {
            assertThat(new OidcClient(node, REALM, APP).refresh(token.refreshToken()).status()).isEqualTo(200);
        }
        assertThat(loaded).as("still early in the load").isLessThan(planned / 2);
        assertThat(NodeMetrics.scrape(node).misses("offlineSessions") - missesBefore)
                .as("cache misses of the recently refreshed sessions' refreshes").isZero();

        await("the limit with no request at work").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250))
                .until(() -> limit(node) >= WORKERS);
        assertThat(NodeMetrics.scrape(node).preloadState("loading")).as("still loading").isTrue();

        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger refreshed = new AtomicInteger();
        ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
        List<Future<?>> traffic = new ArrayList<>();
        for (int c = 0; c < CALLERS; c++) {
            int caller = c;
            traffic.add(callers.submit(() -> {
                OidcClient client = new OidcClient(node, REALM, APP);
                for (int i = caller; !stop.get(); i += CALLERS) {
                    TokenResponse response = client.refresh(tokens.get(i % TOKENS).refreshToken());
                    assertThat(response.status()).as("%s", response).isEqualTo(200);
                    refreshed.incrementAndGet();
                }
                return null;
            }));
        }
        try {
            // Eight callers keep more than two requests at work: the node is behind, not keeping up, so 0 (not the share).
            await("the limit falls to 0 while refreshes pile up").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(250)).until(() -> limit(node) == 0);
        } finally {
            stop.set(true);
            for (Future<?> caller : traffic) {
                caller.get(30, TimeUnit.SECONDS); // fails the test if a refresh failed
            }
            callers.shutdown();
        }
        assertThat(refreshed.get()).isPositive();

        // Steady traffic: one refresh every 200 ms, each answered in milliseconds; never a quiet second.
        AtomicBoolean steadyStop = new AtomicBoolean();
        ExecutorService steadyCaller = Executors.newSingleThreadExecutor();
        Future<?> steady = steadyCaller.submit(() -> {
            OidcClient client = new OidcClient(node, REALM, APP);
            for (int i = 0; !steadyStop.get(); i++) {
                TokenResponse response = client.refresh(tokens.get(i % TOKENS).refreshToken());
                assertThat(response.status()).as("%s", response).isEqualTo(200);
                Thread.sleep(200);
            }
            return null;
        });
        try {
            // The share starts at a quarter of the option's and pauses two seconds in ten to measure the requests.
            await("a share under traffic the node keeps up with").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100)).until(() -> {
                        double limit = limit(node);
                        return limit > 0 && limit <= STEADY_SHARE;
                    });
            long underTraffic = NodeMetrics.scrape(node).preloaded("loaded");
            await("the load moves on under that traffic").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> NodeMetrics.scrape(node).preloaded("loaded") > underTraffic);
            assertThat(limit(node)).as("no quiet second meanwhile").isLessThan(1);
        } finally {
            steadyStop.set(true);
            steady.get(30, TimeUnit.SECONDS);
            steadyCaller.shutdown();
        }

        await("the limit rises again once they stop").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250))
                .until(() -> limit(node) >= WORKERS);
        await("the load completes").atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofSeconds(1))
                .until(() -> NodeMetrics.scrape(node).preloadState("done"));
        assertThat(NodeMetrics.scrape(node).entries("offlineSessions")).isEqualTo(sessionRows);
        assertThat(node.log().linesSinceStart()).as("the progress line ends with the limit and what it reacted to")
                .anyMatch(l -> l.matches(".*; load limit [0-9.]+ of " + WORKERS + " workers \\(.+\\)$"));
    }
}
