package dev.offlinepreload.benchmark;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;

/** The benchmark's view of the cluster's PostgreSQL: statement statistics and the raw read. */
final class Database {

    private static final String SESSION_TABLES = "(query ILIKE '%offline_user_session%' OR query ILIKE '%offline_client_session%')"
            + " AND query NOT ILIKE '%pg_stat_statements%'";

    private final KeycloakCluster cluster;

    Database(KeycloakCluster cluster) {
        this.cluster = cluster;
        execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    }

    /**
     * Puts the database in the same state before every run: a loader's row locks leave dirty pages and tuple flags
     * behind that the next run would otherwise pay for (vacuum, checkpoint) in the middle of its load.
     */
    void settle() {
        execute("VACUUM ANALYZE offline_user_session");
        execute("VACUUM ANALYZE offline_client_session");
        execute("CHECKPOINT");
    }

    void resetStatements() {
        execute("SELECT pg_stat_statements_reset()");
    }

    /** Seconds PostgreSQL spent executing statements on the session tables since the last reset. */
    double sessionTableSeconds() {
        return number("SELECT coalesce(sum(total_exec_time), 0) / 1000 FROM pg_stat_statements WHERE " + SESSION_TABLES);
    }

    /**
     * CPU time the database container has used so far ({@link ContainerCpu}). The difference over a load is the
     * database's work for it; {@link #sessionTableSeconds()} also counts a statement's waiting, for a CPU on a busy
     * machine or for the client to take its rows.
     */
    double cpuSeconds() {
        return ContainerCpu.seconds(cluster.database());
    }

    /** The statements PostgreSQL spent most time on since the last reset: "seconds, calls, rows, query" lines. */
    List<String> topStatements(int count) {
        List<String> lines = new ArrayList<>();
        try (Connection db = connect(); Statement s = db.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT total_exec_time / 1000, calls, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 160)"
                        + " FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT " + count)) {
            while (rs.next()) {
                lines.add(String.format(Locale.ROOT, "%6.2f s %7d calls %9d rows  %s", rs.getDouble(1), rs.getLong(2),
                        rs.getLong(3), rs.getString(4)));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot read pg_stat_statements", e);
        }
        return lines;
    }

    /** Executions of SELECTs on the session tables since the last reset. */
    double sessionTableSelects() {
        return number("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query ILIKE 'select%' AND " + SESSION_TABLES);
    }

    /** Rows those SELECTs returned since the last reset. */
    double sessionTableRowsRead() {
        return number("SELECT coalesce(sum(rows), 0) FROM pg_stat_statements WHERE query ILIKE 'select%' AND " + SESSION_TABLES);
    }

    /**
     * The physical limit: both session tables streamed once over one connection (fetch size 10,000), every column
     * of every offline row read into a Java string. Returns seconds.
     */
    double rawRead() {
        long start = System.nanoTime();
        long chars = 0;
        try (Connection db = connect()) {
            db.setAutoCommit(false); // PostgreSQL streams with a fetch size only inside a transaction
            for (String table : new String[] {"offline_user_session", "offline_client_session"}) {
                try (Statement s = db.createStatement()) {
                    s.setFetchSize(10_000);
                    try (ResultSet rs = s.executeQuery("SELECT * FROM " + table + " WHERE offline_flag = '1'")) {
                        int columns = rs.getMetaData().getColumnCount();
                        while (rs.next()) {
                            for (int c = 1; c <= columns; c++) {
                                String value = rs.getString(c);
                                chars += value == null ? 0 : value.length();
                            }
                        }
                    }
                }
            }
            db.commit();
        } catch (SQLException e) {
            throw new IllegalStateException("Raw read failed", e);
        }
        if (chars == 0) {
            throw new IllegalStateException("Raw read found no offline sessions");
        }
        return (System.nanoTime() - start) / 1e9;
    }

    /** What one streamed query took: rows and seconds on this side, every row's first column read. */
    record Scan(long rows, double seconds) {
    }

    /**
     * Streams the query's rows over one connection as the provider does (in a transaction, fetch size 10,000), reading
     * the first column of every row into a string.
     */
    Scan scan(String sql) {
        long start = System.nanoTime();
        long rows = 0;
        try (Connection db = connect()) {
            db.setAutoCommit(false); // PostgreSQL streams with a fetch size only inside a transaction
            try (Statement s = db.createStatement()) {
                s.setFetchSize(10_000);
                try (ResultSet rs = s.executeQuery(sql)) {
                    while (rs.next()) {
                        if (rs.getString(1) != null) {
                            rows++;
                        }
                    }
                }
            }
            db.commit();
        } catch (SQLException e) {
            throw new IllegalStateException("Scan failed: " + sql, e);
        }
        return new Scan(rows, (System.nanoTime() - start) / 1e9);
    }

    /** The lines of an EXPLAIN statement's output. */
    List<String> explain(String explainSql) {
        List<String> lines = new ArrayList<>();
        try (Connection db = connect(); Statement s = db.createStatement(); ResultSet rs = s.executeQuery(explainSql)) {
            while (rs.next()) {
                lines.add(rs.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("SQL failed: " + explainSql, e);
        }
        return lines;
    }

    /** Seconds PostgreSQL executed the statements whose normalised text is LIKE {@code pattern}, since the last reset. */
    double statementSeconds(String pattern) {
        return number("SELECT coalesce(sum(total_exec_time), 0) / 1000 FROM pg_stat_statements WHERE query LIKE ?", pattern);
    }

    /** Executions of the statements whose normalised text is LIKE {@code pattern}, since the last reset. */
    long statementCalls(String pattern) {
        return (long) number("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE ?", pattern);
    }

    /** The session tables' sizes on disk: each table's heap, its indexes, and the user sessions' primary key. */
    String sessionTableSizes() {
        List<String> sizes = new ArrayList<>();
        try (Connection db = connect(); Statement s = db.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT c.relname, pg_size_pretty(pg_relation_size(c.oid)), pg_size_pretty(pg_indexes_size(c.oid)),"
                        + " (SELECT pg_size_pretty(pg_relation_size(i.indexrelid)) FROM pg_index i WHERE i.indrelid = c.oid"
                        + " AND i.indisprimary) FROM pg_class c WHERE c.relname IN ('offline_user_session', 'offline_client_session')"
                        + " ORDER BY c.relname DESC")) {
            while (rs.next()) {
                sizes.add(rs.getString(1) + ": table " + rs.getString(2) + ", indexes " + rs.getString(3)
                        + " (primary key " + rs.getString(4) + ")");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot read the table sizes", e);
        }
        return String.join("; ", sizes);
    }

    long offlineSessions() {
        return (long) number("SELECT count(*) FROM offline_user_session WHERE offline_flag = '1'");
    }

    void execute(String sql) {
        try (Connection db = connect(); Statement s = db.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("SQL failed: " + sql, e);
        }
    }

    private double number(String sql) {
        try (Connection db = connect(); Statement s = db.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getDouble(1);
        } catch (SQLException e) {
            throw new IllegalStateException("SQL failed: " + sql, e);
        }
    }

    private double number(String sql, String parameter) {
        try (Connection db = connect(); PreparedStatement s = db.prepareStatement(sql)) {
            s.setString(1, parameter);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getDouble(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("SQL failed: " + sql, e);
        }
    }

    private Connection connect() throws SQLException {
        return DriverManager.getConnection(cluster.jdbcUrl(), KeycloakCluster.DB_USER, KeycloakCluster.DB_PASSWORD);
    }
}
