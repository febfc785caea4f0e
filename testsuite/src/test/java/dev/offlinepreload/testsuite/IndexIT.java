package dev.offlinepreload.testsuite;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.OidcClient.TokenResponse;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.testcontainers.lifecycle.Startables;

/**
 * The indexes on a table of 400,000 offline sessions (PostgreSQL, 2 nodes): above Keycloak's index-creation threshold
 * (300,000), too large to index at startup, so one node builds them concurrently in the background while both serve
 * refreshes and logins; the expiration queries' plans use them afterwards; a build killed with its node leaves an
 * INVALID index that the next start rebuilds; and with the online build switched off the node only logs the SQL, which
 * works while writes go on. An open writer's transaction, not the table's size, holds a build under way where a test
 * needs one.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class IndexIT {

    private static final int SESSIONS = 400_000;
    private static final int USERS = 100;
    private static final String REALM = "big";
    private static final String CLIENT = "app-1";
    private static final String REFRESH = "OFFPRELOAD_USS_EXPIRY_REFRESH";
    private static final String CREATED = "OFFPRELOAD_USS_EXPIRY_CREATED";
    private static final String[] CHANGESETS = {"offpreload-1-uss-expiry-refresh", "offpreload-2-uss-expiry-created"};

    private static KeycloakCluster cluster;
    private static String realmId;
    private static String refreshToken;

    @BeforeAll
    static void aMillionOfflineSessions() {
        cluster = KeycloakCluster.builder(IndexIT.class.getSimpleName()).nodes(2)
                .env(KeycloakCluster.PRELOADING, "false")
                .build().start();
        try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
            OfflineSessionSeeder.Realm realm = seeder.createRealm(cluster.node(1), REALM, 1, USERS);
            realmId = realm.id();
            seeder.seed(realm, SeedShape.simple(SESSIONS));
        }
        // Docker's small /dev/shm cannot hold a parallel vacuum's shared memory on a table this size.
        Sql.execute(cluster, "VACUUM (ANALYZE, PARALLEL 0) offline_user_session");
        Sql.execute(cluster, "VACUUM (ANALYZE, PARALLEL 0) offline_client_session");
        TokenResponse login = new OidcClient(cluster.node(1), REALM, CLIENT).offlineLogin(TestRealm.username(2), "password");
        assertThat(login.status()).as("%s", login).isEqualTo(200);
        refreshToken = login.refreshToken();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** As on a first install over a big table: the indexes are missing and their changesets have not run. */
    private static void dropIndexes(String... indexes) {
        for (String index : indexes) {
            Sql.execute(cluster, "DROP INDEX IF EXISTS " + index);
            Sql.execute(cluster, "DELETE FROM databasechangelog_offpreload WHERE id = '"
                    + CHANGESETS[REFRESH.equals(index) ? 0 : 1] + "'");
        }
    }

    private static String validity(String index) {
        return String.join(",", Sql.column(cluster, "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                + " WHERE c.relname = '" + index.toLowerCase() + "'"));
    }

    private static boolean building() {
        return !Sql.column(cluster, "SELECT pid FROM pg_stat_progress_create_index").isEmpty();
    }

    private static List<String> recorded() {
        return Sql.rows(cluster, "SELECT id, exectype FROM databasechangelog_offpreload ORDER BY id");
    }

    private static List<String> lines(KeycloakNode node, String text) {
        return node.log().linesSinceStart().stream().filter(l -> l.contains(text)).toList();
    }

    private static String building(String index) {
        return "Offline-session index " + index + ": building on node";
    }

    /** Refreshes an offline token and logs users in (new offline sessions: inserts), alternating between the nodes. */
    private static final class Traffic implements AutoCloseable {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger refreshesDuringBuild = new AtomicInteger();
        final AtomicInteger loginsDuringBuild = new AtomicInteger();
        final List<String> failures = new ArrayList<>();
        final CompletableFuture<Void> running = CompletableFuture.runAsync(this::loop);

        private void loop() {
            for (int i = 0; !stop.get(); i++) {
                KeycloakNode node = cluster.node(1 + i % 2);
                OidcClient client = new OidcClient(node, REALM, CLIENT);
                String user = TestRealm.username(1 + i % USERS);
                call(node.name() + " refresh", () -> client.refresh(refreshToken), refreshesDuringBuild);
                call(node.name() + " login", () -> client.offlineLogin(user, "password"), loginsDuringBuild);
            }
        }

        /** Counts the request as during the build only if the build ran both before and after it. */
        private void call(String what, Supplier<TokenResponse> request, AtomicInteger duringBuild) {
            boolean before = building();
            TokenResponse response = request.get();
            if (response.status() != 200) {
                synchronized (failures) {
                    failures.add(what + ": " + response);
                }
            } else if (before && building()) {
                duringBuild.incrementAndGet();
            }
        }

        @Override
        public void close() {
            stop.set(true);
            running.join();
        }
    }

    @Test
    @Order(1)
    void oneNodeBuildsTheIndexesInTheBackgroundWhileBothServe() {
        cluster.nodes().forEach(KeycloakNode::stop);
        dropIndexes(REFRESH, CREATED);

        // A writer's open transaction holds CREATE INDEX CONCURRENTLY at "waiting for writers" until it commits, so
        // the build cannot finish during startup however fast a node starts (on a quick node it otherwise could).
        try (Connection writer = Sql.connect(cluster); Statement s = writer.createStatement()) {
            writer.setAutoCommit(false);
            s.execute("LOCK TABLE offline_user_session IN ROW EXCLUSIVE MODE");
            Startables.deepStart(cluster.nodes()).join(); // both at once: both try to build
            // Startup does not wait for the build: both nodes are ready (Keycloak's readiness includes the
            // post-migration work where the build starts) while the build waits for the writer.
            assertThat(validity(REFRESH) + "/" + validity(CREATED)).as("indexes when both nodes are ready").isNotEqualTo("t/t");
            await("a build under way").atMost(Duration.ofMinutes(2)).until(IndexIT::building);
            try (Traffic traffic = new Traffic()) {
                await("refreshes and logins answered during the build").atMost(Duration.ofMinutes(2))
                        .until(() -> traffic.refreshesDuringBuild.get() > 0 && traffic.loginsDuringBuild.get() > 0);
                writer.commit();
                await("both indexes valid").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofSeconds(1))
                        .until(() -> "t".equals(validity(REFRESH)) && "t".equals(validity(CREATED)));
                traffic.close();
                assertThat(traffic.failures).as("refreshes and logins while the indexes were built").isEmpty();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }

        List<KeycloakNode> builders = cluster.nodes().stream().filter(n -> !lines(n, building(REFRESH)).isEmpty()).toList();
        assertThat(builders).as("nodes that built").hasSize(1);
        KeycloakNode builder = builders.get(0);
        for (String index : List.of(REFRESH, CREATED)) {
            assertThat(cluster.nodes().stream().mapToLong(n -> lines(n, building(index)).size()).sum())
                    .as("builds of %s in the cluster", index).isEqualTo(1);
            assertThat(lines(builder, building(index)).get(0)).contains("(offpreload-index-build)")
                    .contains("CREATE INDEX CONCURRENTLY " + index);
        }
        assertThat(recorded()).containsExactly(CHANGESETS[0] + "|MARK_RAN", CHANGESETS[1] + "|MARK_RAN");
    }

    @Test
    @Order(2)
    void theIdleExpirationQueryUsesItsIndex() {
        // findExpiredOfflineUserSessionsLastRefresh as Keycloak sends it (expiration task, per realm, batches of 512),
        // with a cut-off that matches few rows, as when the task keeps up.
        int now = (int) (System.currentTimeMillis() / 1000);
        String query = "SELECT user_session_id, user_id FROM offline_user_session WHERE realm_id = '" + realmId
                + "' AND offline_flag = '1' AND last_session_refresh < " + (now - 7 * 86_400 + 3000)
                + " FETCH FIRST 512 ROWS ONLY";
        assertThat(plan(query)).contains("\"Index Name\": \"offpreload_uss_expiry_refresh\"");
        // Without it PostgreSQL walks Keycloak's index or the table, depending on the data: either way all of the realm.
        assertThat(planWithout("offpreload_uss_expiry_refresh", query)).doesNotContain("offpreload_uss_expiry_refresh");
    }

    @Test
    @Order(2)
    void theMaxLifespanExpirationQueryUsesItsIndex() {
        // findExpiredOfflineUserSessionsCreatedOn; with max lifespan disabled (the default) Keycloak asks for < 0.
        String query = "SELECT user_session_id, user_id FROM offline_user_session WHERE realm_id = '" + realmId
                + "' AND offline_flag = '1' AND created_on < 0 FETCH FIRST 512 ROWS ONLY";
        assertThat(plan(query)).contains("\"Index Name\": \"offpreload_uss_expiry_created\"");
        assertThat(planWithout("offpreload_uss_expiry_created", query)).doesNotContain("offpreload_uss_expiry_created");
    }

    private static String plan(String query) {
        return String.join("\n", Sql.column(cluster, "EXPLAIN (FORMAT JSON) " + query));
    }

    /** The plan without one of our indexes: dropped inside a transaction that is rolled back (PostgreSQL DDL is transactional). */
    private static String planWithout(String index, String query) {
        try (Connection db = Sql.connect(cluster); Statement s = db.createStatement()) {
            db.setAutoCommit(false);
            s.execute("DROP INDEX " + index);
            var rs = s.executeQuery("EXPLAIN (FORMAT JSON) " + query);
            StringBuilder plan = new StringBuilder();
            while (rs.next()) {
                plan.append(rs.getString(1));
            }
            db.rollback();
            return plan.toString();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    @Order(3)
    void killingTheBuildingNodeLeavesAnInvalidIndexThatTheNextStartRebuilds() {
        cluster.nodes().forEach(KeycloakNode::stop);
        dropIndexes(REFRESH, CREATED);
        KeycloakNode node = cluster.node(1);

        // A write transaction left open holds the build in its wait for writers, INVALID index in place: the kill
        // then hits the build mid-way whatever the machine's speed.
        try (Connection writer = Sql.connect(cluster); Statement s = writer.createStatement()) {
            writer.setAutoCommit(false);
            s.executeUpdate("UPDATE offline_user_session SET last_session_refresh = last_session_refresh"
                    + " WHERE user_session_id = (SELECT min(user_session_id) FROM offline_user_session)");
            node.start();
            await("the concurrent build under way").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200))
                    .until(() -> "f".equals(validity(REFRESH)) && building());
            node.kill();
            node.stop();

            // The database noticed the node is gone: it stopped the build and released the node's lock.
            await("build stopped, lock released").atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(500))
                    .until(() -> !building() && Sql.column(cluster, "SELECT 1 FROM pg_locks WHERE locktype = 'advisory'").isEmpty());
            writer.rollback();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        assertThat(validity(REFRESH)).as("left behind INVALID").isEqualTo("f");
        assertThat(recorded()).as("nothing recorded").isEmpty();

        node.start();
        await("rebuilt and recorded").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofSeconds(1))
                .until(() -> recorded().size() == 2);
        assertThat(lines(node, "Offline-session index " + REFRESH + ": dropping the INVALID leftover")).hasSize(1);
        assertThat(validity(REFRESH)).isEqualTo("t");
        assertThat(validity(CREATED)).isEqualTo("t");
    }

    /** Updates sessions in a loop; counts those committed while a CREATE INDEX runs on the table. */
    private static final class Writer implements AutoCloseable {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger writesDuringBuild = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final CompletableFuture<Void> running = CompletableFuture.runAsync(this::loop);

        private void loop() {
            try (Connection db = Sql.connect(cluster);
                 PreparedStatement update = db.prepareStatement("UPDATE offline_user_session SET last_session_refresh = ?"
                         + " WHERE user_session_id = (SELECT user_session_id FROM offline_user_session"
                         + " WHERE offline_flag = '1' OFFSET ? LIMIT 1) AND offline_flag = '1'");
                 PreparedStatement building = db.prepareStatement("SELECT count(*) FROM pg_stat_progress_create_index")) {
                for (int i = 1; !stop.get(); i++) {
                    boolean buildRunning;
                    try (var rs = building.executeQuery()) {
                        rs.next();
                        buildRunning = rs.getInt(1) > 0;
                    }
                    update.setInt(1, (int) (System.currentTimeMillis() / 1000));
                    update.setInt(2, i % 1000);
                    try {
                        update.executeUpdate();
                        if (buildRunning) {
                            writesDuringBuild.incrementAndGet();
                        }
                    } catch (SQLException e) {
                        failed.incrementAndGet();
                    }
                }
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() {
            stop.set(true);
            running.join();
        }
    }

    @Test
    @Order(4)
    void switchedOffTheNodeOnlyLogsTheSqlWhichWorksWhileWritesGoOn() {
        KeycloakNode node = cluster.node(1);
        node.stop();
        dropIndexes(CREATED);
        node.setEnv(optionEnv("build-indexes-online"), "false");

        try (Writer writer = new Writer()) {
            node.start();
            String line = lines(node, "Index " + CREATED + " is missing").stream().findFirst()
                    .orElseThrow(() -> new AssertionError(node.name() + " logged no SQL for the missing " + CREATED));
            assertThat(line).contains("build-indexes-online=false");
            assertThat(lines(node, building(CREATED))).as("nothing built").isEmpty();
            assertThat(validity(CREATED)).as("not built at startup").isEmpty();
            String sql = line.substring(line.indexOf("online: ") + "online: ".length()).trim();
            assertThat(sql).startsWith("CREATE INDEX CONCURRENTLY " + CREATED + " ON OFFLINE_USER_SESSION");

            Sql.execute(cluster, sql); // what the DBA runs, while Keycloak and the writer go on
            writer.close();
            assertThat(writer.writesDuringBuild.get()).as("updates committed while the index was being built").isPositive();
            assertThat(writer.failed.get()).isZero();
        }
        assertThat(validity(CREATED)).isEqualTo("t");
    }
}
