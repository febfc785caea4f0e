package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.SessionSeeder;
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

/**
 * The indexes on a table of a million offline sessions (PostgreSQL): the expiration queries' plans use them; on a
 * table this large startup does not build a missing index but logs the online SQL for it, which works while writes go
 * on; and an index left INVALID by an interrupted build is dropped at the next start.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class IndexIT {

    private static final int SESSIONS = 1_000_000;

    private static KeycloakCluster cluster;
    private static String realmId;
    private static String clientId;
    private static int now;

    @BeforeAll
    static void aMillionOfflineSessions() {
        cluster = KeycloakCluster.builder(IndexIT.class.getSimpleName()).nodes(1)
                .env("KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__PRELOADING", "false")
                .build().start();
        TestRealm.create(cluster.node(1), 1);
        TokenResponse login = new OidcClient(cluster.node(1)).offlineLogin(TestRealm.username(1), "password");
        assertThat(login.status()).as("%s", login).isEqualTo(200);
        now = SessionSeeder.now();
        try (SessionSeeder db = new SessionSeeder(cluster)) {
            db.cloneSession(login.sessionId(), "big-", SESSIONS, now, 30 * 86_400);
            // Docker's small /dev/shm cannot hold a parallel vacuum's shared memory on a table this size.
            db.execute("VACUUM (ANALYZE, PARALLEL 0) offline_user_session");
            db.execute("VACUUM (ANALYZE, PARALLEL 0) offline_client_session");
        }
        realmId = Sql.column(cluster, "SELECT realm_id FROM offline_user_session WHERE user_session_id = 'big-1'").get(0);
        clientId = Sql.column(cluster, "SELECT client_id FROM offline_client_session WHERE user_session_id = 'big-1'").get(0);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
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
    @Order(1)
    void theIdleExpirationQueryReadsOnlyExpiredRows() {
        // findExpiredOfflineUserSessionsLastRefresh as Keycloak sends it (expiration task, per realm, batches of 512),
        // with a cut-off that matches a few hundred rows, as when the task keeps up.
        String query = "SELECT user_session_id, user_id FROM offline_user_session WHERE realm_id = '" + realmId
                + "' AND offline_flag = '1' AND last_session_refresh < " + (now - 30 * 86_400 + 3000)
                + " FETCH FIRST 512 ROWS ONLY";
        assertThat(plan(query)).contains("\"Index Name\": \"offpreload_uss_expiry_refresh\"");
        // Without it PostgreSQL walks Keycloak's index or the table, depending on the data: either way all of the realm.
        assertThat(planWithout("offpreload_uss_expiry_refresh", query)).doesNotContain("offpreload_uss_expiry_refresh");
    }

    @Test
    @Order(1)
    void theMaxLifespanExpirationQueryReadsOnlyExpiredRows() {
        // findExpiredOfflineUserSessionsCreatedOn; with max lifespan disabled (the default) Keycloak asks for < 0.
        String query = "SELECT user_session_id, user_id FROM offline_user_session WHERE realm_id = '" + realmId
                + "' AND offline_flag = '1' AND created_on < 0 FETCH FIRST 512 ROWS ONLY";
        assertThat(plan(query)).contains("\"Index Name\": \"offpreload_uss_expiry_created\"");
        assertThat(planWithout("offpreload_uss_expiry_created", query)).doesNotContain("offpreload_uss_expiry_created");
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
                         + " WHERE user_session_id = ? AND offline_flag = '1'");
                 PreparedStatement building = db.prepareStatement("SELECT count(*) FROM pg_stat_progress_create_index")) {
                for (int i = 1; !stop.get(); i++) {
                    boolean buildRunning;
                    try (var rs = building.executeQuery()) {
                        rs.next();
                        buildRunning = rs.getInt(1) > 0;
                    }
                    update.setInt(1, now);
                    update.setString(2, "big-" + (1 + (i * 7919) % SESSIONS));
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

    private static String loggedSql(KeycloakNode node, String index) {
        String line = node.log().linesSinceStart().stream()
                .filter(l -> l.contains("Index " + index + " is missing")).findFirst()
                .orElseThrow(() -> new AssertionError(node.name() + " logged no SQL for the missing " + index));
        return line.substring(line.indexOf("online: ") + "online: ".length()).trim();
    }

    private static String validity(String index) {
        return String.join(",", Sql.column(cluster, "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                + " WHERE c.relname = '" + index + "'"));
    }

    @Test
    @Order(2)
    void onALargeTableStartupLeavesTheBuildToTheDbaAndWritesNeverWait() {
        KeycloakNode node = cluster.node(1);
        node.stop();
        // As on a first install over a big table: the index is missing and its changeset has not run.
        Sql.execute(cluster, "DROP INDEX offpreload_uss_expiry_refresh");
        Sql.execute(cluster, "DELETE FROM databasechangelog_offpreload WHERE id = 'offpreload-1-uss-expiry-refresh'");

        try (Writer writer = new Writer()) {
            node.start();
            assertThat(validity("offpreload_uss_expiry_refresh")).as("not built at startup").isEmpty();
            String sql = loggedSql(node, "OFFPRELOAD_USS_EXPIRY_REFRESH");
            assertThat(sql).startsWith("CREATE INDEX CONCURRENTLY OFFPRELOAD_USS_EXPIRY_REFRESH ON OFFLINE_USER_SESSION");

            Sql.execute(cluster, sql); // what the DBA runs, while Keycloak and the writer go on
            writer.close();
            assertThat(writer.writesDuringBuild.get()).as("updates committed while the index was being built").isPositive();
            assertThat(writer.failed.get()).isZero();
        }
        assertThat(validity("offpreload_uss_expiry_refresh")).isEqualTo("t");

        node.restart();
        assertThat(node.log().linesSinceStart()).as("nothing missing any more").noneMatch(l -> l.contains("is missing"));
        assertThat(validity("offpreload_uss_expiry_refresh")).isEqualTo("t");
    }

    @Test
    @Order(3)
    void anIndexLeftInvalidByAnInterruptedBuildIsDroppedAndItsSqlLoggedAgain() {
        KeycloakNode node = cluster.node(1);
        node.stop();
        // A DBA's concurrent build that was interrupted: the index is there but INVALID, and useless.
        Sql.execute(cluster, "DROP INDEX offpreload_uss_expiry_created");
        Sql.execute(cluster, "DELETE FROM databasechangelog_offpreload WHERE id = 'offpreload-2-uss-expiry-created'");
        CompletableFuture<Void> build = CompletableFuture.runAsync(() -> {
            try {
                Sql.execute(cluster, "CREATE INDEX CONCURRENTLY offpreload_uss_expiry_created ON offline_user_session"
                        + " (realm_id, offline_flag, created_on)");
            } catch (IllegalStateException cancelled) {
                // expected: cancelled below
            }
        });
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofMinutes(1)).until(() ->
                !Sql.column(cluster, "SELECT pid FROM pg_stat_progress_create_index").isEmpty());
        Sql.column(cluster, "SELECT pg_cancel_backend(pid) FROM pg_stat_progress_create_index");
        build.join();
        assertThat(validity("offpreload_uss_expiry_created")).as("left behind INVALID").isEqualTo("f");

        node.start();

        assertThat(validity("offpreload_uss_expiry_created")).as("the INVALID leftover is gone").isEmpty();
        assertThat(loggedSql(node, "OFFPRELOAD_USS_EXPIRY_CREATED")).startsWith("CREATE INDEX CONCURRENTLY OFFPRELOAD_USS_EXPIRY_CREATED");
    }
}
