package dev.offlinepreload.testsuite.db;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;

/** Plain SQL against the cluster's PostgreSQL, for assertions about schema, plans and statistics. */
public final class Sql {

    private Sql() {
    }

    public static Connection connect(KeycloakCluster cluster) {
        try {
            return DriverManager.getConnection(cluster.jdbcUrl(), KeycloakCluster.DB_USER, KeycloakCluster.DB_PASSWORD);
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot connect to the cluster's database", e);
        }
    }

    /** The first column of every row, as strings. */
    public static List<String> column(KeycloakCluster cluster, String sql) {
        try (Connection db = connect(cluster); Statement s = db.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            List<String> values = new ArrayList<>();
            while (rs.next()) {
                values.add(rs.getString(1));
            }
            return values;
        } catch (SQLException e) {
            throw new IllegalStateException("SQL failed: " + sql, e);
        }
    }

    /** Rows as "col1|col2|..." strings. */
    public static List<String> rows(KeycloakCluster cluster, String sql) {
        try (Connection db = connect(cluster); Statement s = db.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            List<String> rows = new ArrayList<>();
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                StringBuilder row = new StringBuilder();
                for (int c = 1; c <= columns; c++) {
                    row.append(c > 1 ? "|" : "").append(rs.getString(c));
                }
                rows.add(row.toString());
            }
            return rows;
        } catch (SQLException e) {
            throw new IllegalStateException("SQL failed: " + sql, e);
        }
    }

    /** The single number a query returns (a count, a sum). */
    public static long number(KeycloakCluster cluster, String sql) {
        return Long.parseLong(column(cluster, sql).get(0));
    }

    /** Runs one statement; returns its update count, or -1 for a query. */
    public static int execute(KeycloakCluster cluster, String sql) {
        try (Connection db = connect(cluster); Statement s = db.createStatement()) {
            return s.execute(sql) ? -1 : s.getUpdateCount();
        } catch (SQLException e) {
            throw new IllegalStateException("SQL failed: " + sql, e);
        }
    }
}
