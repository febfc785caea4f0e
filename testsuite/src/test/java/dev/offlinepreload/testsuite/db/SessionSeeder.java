package dev.offlinepreload.testsuite.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;

/**
 * Bulk offline sessions straight in PostgreSQL, cloned from a session Keycloak itself created through the token
 * endpoint (so DATA is exactly what Keycloak writes), with fresh ids and timestamps spread over time.
 */
public final class SessionSeeder implements AutoCloseable {

    private final Connection db;

    public SessionSeeder(KeycloakCluster cluster) {
        db = Sql.connect(cluster);
    }

    public static int now() {
        return (int) Instant.now().getEpochSecond();
    }

    /**
     * Clones the template session {@code count} times with ids {@code <prefix>1..<prefix>count}; clone i was last
     * refreshed {@code i % spreadSeconds} seconds before {@code refreshedAt}, so lower numbers are more recent.
     */
    public int cloneSession(String templateId, String prefix, int count, int refreshedAt, int spreadSeconds) {
        String users = "INSERT INTO offline_user_session (user_session_id, user_id, realm_id, created_on, offline_flag, data,"
                + " last_session_refresh, broker_session_id, version, remember_me)"
                + " SELECT ? || g, t.user_id, t.realm_id, ? - 86400, '1', t.data, ? - (g % ?), t.broker_session_id, 0, t.remember_me"
                + " FROM offline_user_session t, generate_series(1, ?) g WHERE t.user_session_id = ? AND t.offline_flag = '1'";
        String clients = "INSERT INTO offline_client_session (user_session_id, client_id, client_storage_provider,"
                + " external_client_id, offline_flag, timestamp, data, version, realm_id)"
                + " SELECT ? || g, c.client_id, c.client_storage_provider, c.external_client_id, '1', ? - (g % ?), c.data, 0, c.realm_id"
                + " FROM offline_client_session c, generate_series(1, ?) g WHERE c.user_session_id = ? AND c.offline_flag = '1'";
        try (PreparedStatement u = db.prepareStatement(users); PreparedStatement c = db.prepareStatement(clients)) {
            u.setString(1, prefix);
            u.setInt(2, refreshedAt);
            u.setInt(3, refreshedAt);
            u.setInt(4, Math.max(1, spreadSeconds));
            u.setInt(5, count);
            u.setString(6, templateId);
            int inserted = u.executeUpdate();
            c.setString(1, prefix);
            c.setInt(2, refreshedAt);
            c.setInt(3, Math.max(1, spreadSeconds));
            c.setInt(4, count);
            c.setString(5, templateId);
            c.executeUpdate();
            return inserted;
        } catch (SQLException e) {
            throw new IllegalStateException("Seeding failed", e);
        }
    }

    /** Runs SQL with no parameters (corrupting rows, moving timestamps) and returns the update count. */
    public int execute(String sql) {
        try (Statement s = db.createStatement()) {
            return s.executeUpdate(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("SQL failed: " + sql, e);
        }
    }

    public long count(String sql) {
        try (Statement s = db.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException("SQL failed: " + sql, e);
        }
    }

    @Override
    public void close() {
        try {
            db.close();
        } catch (SQLException ignored) {
            // closing a test connection
        }
    }
}
