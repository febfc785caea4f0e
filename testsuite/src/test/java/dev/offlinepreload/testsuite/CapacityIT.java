package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder.Realm;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder.Seeded;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
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
 * More sessions than the caches hold, two apps per user: each node loads its most recently refreshed sessions up to
 * max-count less the headroom, never more, and evicts nothing; it says so once, with the numbers and the max-count
 * values that would hold them all; and with those values set, the next full restart loads every session.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CapacityIT {

    private static final int MAX_COUNT = 600;
    private static final int FILL_LIMIT = MAX_COUNT - MAX_COUNT * 10 / 100;
    private static final int NEWEST = 10;
    private static final int OLDEST = 10;
    private static final String REALM = "capacity";
    private static final String APP = "app-1";
    /** Two client sessions per session: the client-session cache is the bound (540 hold 270 sessions per node). */
    private static final SeedShape SHAPE = new SeedShape(2000, 2, 1, 0.10, 0, 3600);
    private static final String WARNING = "the database holds";
    private static final Pattern ADVICE = Pattern.compile("cache-embedded-offline-sessions-max-count=(\\d+) and "
            + "cache-embedded-offline-client-sessions-max-count=(\\d+) ");

    private static KeycloakCluster cluster;
    private static final List<TokenResponse> tokens = new ArrayList<>();
    /** Per node, right after loading and before any request: what the loader alone put into the caches. */
    private static final List<NodeMetrics> afterLoad = new ArrayList<>();
    /** Non-expired offline sessions and client sessions in the database. */
    private static long sessions;
    private static long clientSessions;

    @BeforeAll
    static void restartWithMoreSessionsThanFit() {
        cluster = KeycloakCluster.builder(CapacityIT.class.getSimpleName()).nodes(2)
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", Integer.toString(MAX_COUNT))
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", Integer.toString(MAX_COUNT))
                .env(optionEnv("capacity-headroom-percent"), "10")
                // one pass per restart, for both nodes together: one topology, one WARN per node
                .env(optionEnv("expected-cluster-size"), "2")
                .build().start();
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            Realm realm = seeder.createRealm(cluster.node(1), REALM, 2, NEWEST + OLDEST);
            for (int i = 1; i <= NEWEST + OLDEST; i++) {
                TokenResponse login = new OidcClient(cluster.node(1), REALM, APP).offlineLogin(TestRealm.username(i), "password");
                assertThat(login.status()).as("%s", login).isEqualTo(200);
                tokens.add(login);
            }
            // Clones refreshed within the last hour (10% expired long ago); the first NEWEST real sessions now, the
            // last OLDEST two days ago: the least recently used of all.
            Seeded seeded = seeder.seed(realm, SHAPE);
            int now = (int) (System.currentTimeMillis() / 1000);
            for (int i = 0; i < NEWEST + OLDEST; i++) {
                int refreshed = i < NEWEST ? now : now - 2 * 86_400;
                Sql.execute(cluster, "UPDATE offline_user_session SET last_session_refresh = " + refreshed + ", created_on = "
                        + (refreshed - 60) + " WHERE user_session_id = '" + tokens.get(i).sessionId() + "'");
            }
            int real = realm.templateSessionIds().size() + NEWEST + OLDEST; // one client session each
            sessions = seeded.valid() + real;
            clientSessions = (long) SHAPE.clientSessionsPerSession() * seeded.valid() + real;
        }
        restartAndAwaitLoaded();
        cluster.nodes().forEach(n -> afterLoad.add(NodeMetrics.scrape(n)));
    }

    private static void restartAndAwaitLoaded() {
        cluster.restartAll();
        // "done" for 3 s on both: a node that has not yet noticed the other's join cannot pass for finished.
        await("both nodes loaded").atMost(Duration.ofMinutes(3)).during(Duration.ofSeconds(3))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> cluster.nodes().stream().allMatch(n -> NodeMetrics.scrape(n).preloadState("done")));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Sessions one node takes: as many as 540 client sessions hold at the database's average per session. */
    private static long nodeCapacity() {
        return Math.min(FILL_LIMIT, FILL_LIMIT * sessions / clientSessions);
    }

    @Test
    @Order(1)
    void eachNodeFillsUpToItsLimitAndNoFurther() {
        for (int i = 0; i < cluster.nodes().size(); i++) {
            KeycloakNode node = cluster.nodes().get(i);
            NodeMetrics m = afterLoad.get(i);
            assertThat(m.entries("offlineSessions")).as("%s offlineSessions", node.name()).isEqualTo(nodeCapacity());
            assertThat(m.entries("offlineClientSessions")).as("%s offlineClientSessions", node.name())
                    .isBetween(nodeCapacity(), (long) FILL_LIMIT);
            for (String cache : List.of("offlineSessions", "offlineClientSessions")) {
                assertThat(m.value("vendor_statistics_evictions", "cache", cache)).as("%s %s evictions", node.name(), cache)
                        .isZero();
            }
        }
    }

    @Test
    @Order(2)
    void eachNodeSaysOnceWhatDoesNotFitAndWhatWouldHoldIt() {
        long nodeCapacity = nodeCapacity();
        List<String> advised = new ArrayList<>();
        for (KeycloakNode node : cluster.nodes()) {
            List<String> warnings = capacityWarnings(node);
            assertThat(warnings).as("%s capacity WARNs", node.name()).hasSize(1);
            assertThat(warnings.get(0)).contains(String.format(Locale.ROOT,
                    "Offline session preload on %s: the database holds %,d offline sessions that have not expired (%,d "
                            + "client sessions", node.name(), sessions, clientSessions),
                    String.format(Locale.ROOT, "the caches of 2 nodes take %,d of them (%,d per node",
                            2 * nodeCapacity, nodeCapacity),
                    "least recently used", "KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", "MiB of heap per node");
            Matcher advice = ADVICE.matcher(warnings.get(0));
            assertThat(advice.find()).as("%s advice in %s", node.name(), warnings.get(0)).isTrue();
            advised.add(advice.group(1) + "/" + advice.group(2));

            NodeMetrics m = NodeMetrics.scrape(node);
            assertThat(m.value("keycloak_offline_preload_database_sessions")).as("%s database gauge", node.name())
                    .isEqualTo(sessions);
            assertThat(m.value("keycloak_offline_preload_capacity_sessions")).as("%s capacity gauge", node.name())
                    .isEqualTo(nodeCapacity);
        }
        assertThat(advised).as("the same advice on every node").containsOnly(advised.get(0));
    }

    @Test
    @Order(3)
    void theMostRecentlyRefreshedAreTheOnesLoaded() {
        long newestMisses = missesWhileRefreshing(tokens.subList(0, NEWEST));
        long oldestMisses = missesWhileRefreshing(tokens.subList(NEWEST, NEWEST + OLDEST));
        assertThat(newestMisses).as("misses refreshing the newest sessions (all loaded)").isZero();
        assertThat(oldestMisses).as("misses refreshing the oldest sessions (none loaded)").isGreaterThanOrEqualTo(OLDEST);
    }

    @Test
    @Order(4) // restarts the cluster
    void followingTheAdviceLoadsEverySessionAtTheNextFullRestart() {
        Matcher advice = ADVICE.matcher(capacityWarnings(cluster.node(1)).get(0));
        assertThat(advice.find()).isTrue();
        for (KeycloakNode node : cluster.nodes()) {
            node.setEnv("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", advice.group(1));
            node.setEnv("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", advice.group(2));
        }

        restartAndAwaitLoaded();

        List<NodeMetrics> metrics = cluster.nodes().stream().map(NodeMetrics::scrape).toList();
        assertThat(metrics.stream().mapToLong(m -> m.entries("offlineSessions")).sum()).as("offlineSessions, all nodes")
                .isEqualTo(sessions);
        assertThat(metrics.stream().mapToLong(m -> m.entries("offlineClientSessions")).sum())
                .as("offlineClientSessions, all nodes").isEqualTo(clientSessions);
        assertThat(metrics.stream().mapToLong(m -> m.preloaded("loaded")).sum()).as("loaded, all nodes").isEqualTo(sessions);
        for (int i = 0; i < metrics.size(); i++) {
            KeycloakNode node = cluster.nodes().get(i);
            assertThat(capacityWarnings(node)).as("%s capacity WARNs after following the advice", node.name()).isEmpty();
            assertThat(metrics.get(i).value("keycloak_offline_preload_database_sessions")).isEqualTo(sessions);
            assertThat(metrics.get(i).value("keycloak_offline_preload_capacity_sessions") * metrics.size())
                    .as("%s capacity × nodes", node.name()).isGreaterThanOrEqualTo(sessions);
            assertThat(metrics.get(i).value("vendor_statistics_evictions", "cache", "offlineSessions")).isZero();
        }
    }

    /** The capacity WARNs of the node's current container. */
    private static List<String> capacityWarnings(KeycloakNode node) {
        return node.log().linesSinceStart().stream().filter(l -> l.contains(" WARN ") && l.contains(WARNING)).toList();
    }

    private static long missesWhileRefreshing(List<TokenResponse> sessions) {
        long before = cluster.nodes().stream().mapToLong(n -> NodeMetrics.scrape(n).misses("offlineSessions")).sum();
        for (TokenResponse session : sessions) {
            TokenResponse refreshed = new OidcClient(cluster.node(1), REALM, APP).refresh(session.refreshToken());
            assertThat(refreshed.status()).as("%s", refreshed).isEqualTo(200);
        }
        return cluster.nodes().stream().mapToLong(n -> NodeMetrics.scrape(n).misses("offlineSessions")).sum() - before;
    }
}
