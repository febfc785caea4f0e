package dev.offlinepreload.keycloak;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Predicate;

import dev.offlinepreload.plan.Batch;
import jakarta.persistence.EntityManager;
import org.hibernate.Session;

/**
 * The loader's queries: plain, portable SQL over Keycloak's session tables, run through the connection of the
 * Keycloak transaction (so in its transaction, on Keycloak's datasource). No ORM on the hot path: Hibernate's
 * translation, binding and entity construction cost about a sixth of the loader's CPU. A batch is read either as a
 * key range (one range scan of each table's primary key) or by id; id lists are cut at 1000 (Oracle's IN-list limit)
 * and padded to a power of two, so each statement has at most 11 shapes for the drivers' statement caches. Every
 * query is served by a primary key or an existing index, and none takes a lock.
 * <p>
 * Every statement is bounded in time: a query timeout, which the database enforces by cancelling the statement, and,
 * a few seconds longer, the read timeout of the connection, which ends the wait for a hung or paused database that
 * cannot even cancel (the driver then closes the connection and the pool discards it). Either is an SQLException,
 * retried like any other database failure. The read timeout is the connection's, so it is put back afterwards: the
 * pool does not reset it.
 * <p>
 * The key streams are streamed, not buffered whole: through the fetch size, or, with MySQL Connector/J (which ignores
 * the fetch size without {@code useCursorFetch=true}), row by row ({@code Integer.MIN_VALUE}). Nothing else uses the
 * connection while a stream is open.
 * <p>
 * Rows outside a batch (other nodes' sessions in a range, sessions over capacity) are dropped after reading their key
 * column only: their DATA is never fetched into a string.
 */
final class SessionQueries {

    static final String OFFLINE = "1";
    static final int MAX_IN_LIST = 1000;
    /** Powers of two, then the limit: never more than twice the parameters needed, at most 11 shapes per query. */
    private static final int[] PADDED_SIZES = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, MAX_IN_LIST};
    private static final int FETCH_SIZE = 10_000;
    /** How much longer than the query timeout the connection waits for a byte before giving the database up. */
    static final int READ_TIMEOUT_MARGIN_MILLIS = 5_000;
    /** setNetworkTimeout's executor: MariaDB Connector/J refuses null; PostgreSQL's and MySQL's drivers do not use it. */
    private static final Executor DIRECT = Runnable::run;
    private static final String IDS = "(?)";
    /**
     * Leads every statement of the loader: a DBA sees in pg_stat_activity or pg_stat_statements (and their
     * equivalents) which statements are the loader's, and the benchmark counts Keycloak's own apart from them.
     */
    static final String TAG = "/* offline-preload */ ";
    private static final String RANGE = " BETWEEN ? AND ?";

    private final boolean dataAsBytes;
    private final int timeoutSeconds;
    private final int fetchSize;
    private final String keys;
    private final String candidates;
    private final String recent;
    private final String userSessions;
    private final String clientSessions;
    private final String userSessionIds;
    private final String clientSessionKeys;
    private final String sessionCount;
    private final String clientSessionCount;
    private final String expiredClientSessionCount;
    private final String realmIdleTimeouts;

    /**
     * A user session row, its DATA read as {@link SessionData} (the entity's own DATA is null).
     *
     * @param localUserExists whether USER_ENTITY holds the session's user (false for users of a user storage provider)
     */
    record UserSessionRow(ReadOnlyUserSession entity, SessionData data, boolean localUserExists) {
    }

    /** A client session row, its DATA read as {@link SessionData} (the entity's own DATA is null). */
    record ClientSessionRow(ReadOnlyClientSession entity, SessionData data) {
    }

    /**
     * @param schema      Keycloak's database schema ({@code db-schema}), or null for the connection's default
     * @param dataAsBytes whether DATA is read as the driver's unconverted UTF-8 bytes (PostgreSQL) instead of a string
     * @param timeout     longest a statement may take, or wait for the database ({@code database-timeout-seconds})
     * @param driverName  the JDBC driver's name: MySQL Connector/J streams only row by row
     * @param minor       the Keycloak minor, whose session tables the queries read
     */
    SessionQueries(String schema, boolean dataAsBytes, Duration timeout, String driverName, KeycloakMinor minor) {
        this.dataAsBytes = dataAsBytes;
        this.fetchSize = driverName.startsWith("MySQL Connector") ? Integer.MIN_VALUE : FETCH_SIZE;
        this.timeoutSeconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE / 1000 - READ_TIMEOUT_MARGIN_MILLIS, timeout.toSeconds()));
        String prefix = schema == null || schema.isBlank() ? "" : schema + ".";
        String userTable = prefix + "OFFLINE_USER_SESSION";
        String clientTable = prefix + "OFFLINE_CLIENT_SESSION";
        keys = "SELECT USER_SESSION_ID FROM " + userTable + " WHERE OFFLINE_FLAG = ? ORDER BY USER_SESSION_ID";
        candidates = "SELECT USER_SESSION_ID, LAST_SESSION_REFRESH, REALM_ID FROM " + userTable
                + " WHERE OFFLINE_FLAG = ? AND LAST_SESSION_REFRESH >= ? ORDER BY USER_SESSION_ID";
        // Served by OFFPRELOAD_USS_EXPIRY_REFRESH (REALM_ID, OFFLINE_FLAG, LAST_SESSION_REFRESH): a range scan of the
        // window's rows only
        recent = "SELECT USER_SESSION_ID, LAST_SESSION_REFRESH FROM " + userTable
                + " WHERE REALM_ID = ? AND OFFLINE_FLAG = ? AND LAST_SESSION_REFRESH >= ?";
        // Whether the user exists, row by row through USER_ENTITY's primary key, in the same statement: as a second
        // statement (an id list per batch) it cost a round trip and 1000 bound ids per batch; as a join, PostgreSQL
        // may hash a small user table whole for every batch (4.6 s more per 1M in the benchmark)
        // REMEMBER_ME exists from Keycloak 26.5 on; before, remember-me is in DATA only
        userSessions = "SELECT s.USER_SESSION_ID, s.REALM_ID, s.USER_ID, s.CREATED_ON, s.LAST_SESSION_REFRESH,"
                + " s.BROKER_SESSION_ID, " + (minor.hasRememberMeColumn() ? "s.REMEMBER_ME" : "NULL") + ", s.DATA, CASE WHEN EXISTS (SELECT 1 FROM " + prefix + "USER_ENTITY u"
                + " WHERE u.ID = s.USER_ID) THEN 1 ELSE 0 END FROM " + userTable + " s WHERE s.OFFLINE_FLAG = ? AND s.USER_SESSION_ID";
        // TIMESTAMP is a keyword in some databases: qualified, as Hibernate writes it, it is a plain column everywhere
        clientSessions = "SELECT c.USER_SESSION_ID, c.CLIENT_ID, c.CLIENT_STORAGE_PROVIDER, c.EXTERNAL_CLIENT_ID,"
                + " c.TIMESTAMP, c.DATA FROM " + clientTable + " c WHERE c.OFFLINE_FLAG = ? AND c.USER_SESSION_ID";
        userSessionIds = "SELECT USER_SESSION_ID FROM " + userTable + " WHERE OFFLINE_FLAG = ? AND USER_SESSION_ID";
        clientSessionKeys = "SELECT USER_SESSION_ID, CLIENT_ID, CLIENT_STORAGE_PROVIDER, EXTERNAL_CLIENT_ID FROM " + clientTable
                + " WHERE OFFLINE_FLAG = ? AND USER_SESSION_ID";
        sessionCount = "SELECT COUNT(USER_SESSION_ID) FROM " + userTable + " WHERE OFFLINE_FLAG = ? AND LAST_SESSION_REFRESH >= ";
        clientSessionCount = "SELECT COUNT(USER_SESSION_ID) FROM " + clientTable + " WHERE OFFLINE_FLAG = ?";
        // The realm's own column, as RealmAdapter.getOfflineSessionIdleTimeout reads it: read here, bounded like every
        // loader statement, and not through Keycloak's realm provider, whose realm list query has no timeout.
        realmIdleTimeouts = "SELECT ID, OFFLINE_SESSION_IDLE_TIMEOUT FROM " + prefix + "REALM";
        expiredClientSessionCount = "SELECT COUNT(c.USER_SESSION_ID) FROM " + clientTable + " c JOIN " + userTable + " s"
                + " ON c.USER_SESSION_ID = s.USER_SESSION_ID AND c.OFFLINE_FLAG = s.OFFLINE_FLAG WHERE s.OFFLINE_FLAG = ? AND ";
    }

    /** A row's columns, read in the order of the SELECT. */
    private interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /** Every offline session id, in key order: an index-only scan of the primary key, no sort. */
    void keys(EntityManager em, Consumer<String> sink) {
        stream(em, keys, List.of(OFFLINE), rs -> rs.getString(1), sink);
    }

    /** Every offline session refreshed since {@code oldest}: id, last refresh and realm, in key order. */
    void candidates(EntityManager em, int oldest, Consumer<Object[]> sink) {
        stream(em, candidates, List.of(OFFLINE, oldest), rs -> new Object[] {rs.getString(1), rs.getInt(2), rs.getString(3)}, sink);
    }

    /** The realm's offline sessions refreshed since {@code since}: id and last refresh. */
    void recent(EntityManager em, String realm, int since, Consumer<Object[]> sink) {
        stream(em, recent, List.of(realm, OFFLINE, since), rs -> new Object[] {rs.getString(1), rs.getInt(2)}, sink);
    }

    /** Each realm's offline session idle timeout in seconds, by realm id. */
    Map<String, Integer> realmIdleTimeouts(EntityManager em) {
        Map<String, Integer> timeouts = new HashMap<>();
        stream(em, realmIdleTimeouts, List.of(), rs -> Map.entry(rs.getString(1), rs.getInt(2)),
                realm -> timeouts.put(realm.getKey(), realm.getValue()));
        return timeouts;
    }

    /** The user session rows of the batch's sessions, as Keycloak's own read-only projection, with their user's existence. */
    List<UserSessionRow> userSessions(EntityManager em, Batch batch, Predicate<String> wanted) {
        return read(em, userSessions, batch, wanted, (id, rs) -> new UserSessionRow(new ReadOnlyUserSession(id,
                rs.getString(2), rs.getString(3), rs.getInt(4), rs.getInt(5), rs.getString(6), rememberMe(rs)),
                SessionData.read(rs, 8, dataAsBytes), rs.getInt(9) == 1));
    }

    /** The client session rows of the batch's sessions, as Keycloak's own read-only projection. */
    List<ClientSessionRow> clientSessions(EntityManager em, Batch batch, Predicate<String> wanted) {
        return read(em, clientSessions, batch, wanted, (id, rs) -> new ClientSessionRow(new ReadOnlyClientSession(id,
                rs.getString(2), rs.getString(3), rs.getString(4), rs.getInt(5)), SessionData.read(rs, 6, dataAsBytes)));
    }

    /** Which user sessions of the batch (or its range) still exist. */
    Set<String> existingUserSessionIds(EntityManager em, Batch batch) {
        return new HashSet<>(read(em, userSessionIds, batch, id -> true, (id, rs) -> id));
    }

    /** Existing client sessions of the batch (or its range) as "userSessionId/clientId" (clientId as Keycloak resolves it). */
    Set<String> existingClientSessionKeys(EntityManager em, Batch batch) {
        return new HashSet<>(read(em, clientSessionKeys, batch, id -> true, (id, rs) -> clientSessionKey(id,
                new ReadOnlyClientSession(id, rs.getString(2), rs.getString(3), rs.getString(4), 0).getClientId())));
    }

    /**
     * Offline sessions that have not expired, each realm with its own oldest allowed last refresh: one scan of the
     * table for all realms, with the cut-off picked per row ({@code CASE REALM_ID WHEN ... END}; other realms never).
     */
    long countSessions(EntityManager em, Map<String, Integer> oldestByRealm) {
        if (oldestByRealm.isEmpty()) {
            return 0; // no realm, no session (and CASE needs a WHEN)
        }
        StringBuilder cutOff = new StringBuilder(sessionCount).append("CASE REALM_ID");
        oldestByRealm.forEach((realm, oldest) -> cutOff.append(" WHEN ? THEN ?"));
        cutOff.append(" ELSE ").append(Integer.MAX_VALUE).append(" END");
        return count(em, cutOff.toString(), realmParams(oldestByRealm));
    }

    /**
     * The client sessions of {@link #countSessions}'s sessions: all offline client sessions less those of expired
     * sessions. Both are cheap where it matters: the first reads one table without a join; the second finds the
     * expired sessions realm by realm through the expiry index ({@code REALM_ID, OFFLINE_FLAG, LAST_SESSION_REFRESH})
     * and joins only those, usually few (Keycloak deletes expired sessions every few minutes). The join of both
     * tables whole that this replaces cost 2.2 s of PostgreSQL time per 1M sessions, and the planner waits for the
     * count. Client sessions without their user session, or of a realm that no longer exists, are counted: they are
     * deleted with their session or realm, and an overcount only makes the capacity advice cautious.
     */
    long countClientSessions(EntityManager em, Map<String, Integer> oldestByRealm) {
        if (oldestByRealm.isEmpty()) {
            return 0;
        }
        StringJoiner expired = new StringJoiner(" OR ", expiredClientSessionCount + "(", ")");
        oldestByRealm.forEach((realm, oldest) -> expired.add("(s.REALM_ID = ? AND s.LAST_SESSION_REFRESH < ?)"));
        long all = count(em, clientSessionCount, List.of(OFFLINE));
        return Math.max(0, all - count(em, expired.toString(), realmParams(oldestByRealm)));
    }

    /** OFFLINE, then each realm's id and oldest allowed last refresh. */
    private static List<Object> realmParams(Map<String, Integer> oldestByRealm) {
        List<Object> params = new ArrayList<>(1 + 2 * oldestByRealm.size());
        params.add(OFFLINE);
        oldestByRealm.forEach((realm, oldest) -> {
            params.add(realm);
            params.add(oldest);
        });
        return params;
    }

    private long count(EntityManager em, String sql, List<?> params) {
        return list(em, sql, params, rs -> rs.getLong(1)).get(0);
    }

    static String clientSessionKey(String userSessionId, String clientId) {
        return userSessionId + "/" + clientId;
    }

    /** A row of a batch read, given its key (column 1), already known to be wanted. */
    private interface BatchRowReader<T> {
        T read(String id, ResultSet rs) throws SQLException;
    }

    /** The rows of the batch's key range, or of its ids; rows whose key is not wanted are skipped unread. */
    private <T> List<T> read(EntityManager em, String select, Batch batch, Predicate<String> wanted, BatchRowReader<T> reader) {
        RowReader<T> row = rs -> {
            String id = rs.getString(1);
            return wanted.test(id) ? reader.read(id, rs) : null;
        };
        if (batch.range()) {
            return list(em, select + RANGE, List.of(OFFLINE, batch.first(), batch.last()), row);
        }
        List<T> rows = new ArrayList<>(batch.size());
        for (int from = 0; from < batch.size(); from += MAX_IN_LIST) {
            List<String> chunk = batch.ids().subList(from, Math.min(batch.size(), from + MAX_IN_LIST));
            List<Object> params = new ArrayList<>(chunk.size() + 1);
            params.add(OFFLINE);
            params.addAll(padded(chunk));
            rows.addAll(list(em, in(select + " IN " + IDS, chunk), params, row));
        }
        return rows;
    }

    private static Boolean rememberMe(ResultSet rs) throws SQLException {
        boolean value = rs.getBoolean(7);
        return rs.wasNull() ? null : value;
    }

    /** The query with its id list written out as {@link #paddedSize} placeholders. */
    static String in(String query, List<String> chunk) {
        int size = paddedSize(chunk.size());
        StringBuilder params = new StringBuilder(size * 3).append('(');
        for (int i = 0; i < size; i++) {
            params.append(i == 0 ? "?" : ", ?");
        }
        return query.replace(IDS, params.append(')').toString());
    }

    static int paddedSize(int ids) {
        for (int size : PADDED_SIZES) {
            if (ids <= size) {
                return size;
            }
        }
        throw new IllegalArgumentException(ids + " ids in one IN list; at most " + MAX_IN_LIST);
    }

    /** The chunk padded to {@link #paddedSize} by repeating its last id. */
    private static List<String> padded(List<String> chunk) {
        List<String> padded = new ArrayList<>(paddedSize(chunk.size()));
        padded.addAll(chunk);
        while (padded.size() < paddedSize(chunk.size())) {
            padded.add(chunk.get(chunk.size() - 1));
        }
        return padded;
    }

    /** All rows the reader returns non-null for. */
    private <T> List<T> list(EntityManager em, String sql, List<?> params, RowReader<T> reader) {
        List<T> rows = new ArrayList<>();
        stream(em, sql, params, reader, value -> rows.add(value));
        return rows;
    }

    /** Streams the rows through the Keycloak transaction's connection, each statement bounded in time. */
    private <T> void stream(EntityManager em, String sql, List<?> params, RowReader<T> reader, Consumer<? super T> sink) {
        em.unwrap(Session.class).doWork(connection -> {
            int readTimeout = connection.getNetworkTimeout();
            connection.setNetworkTimeout(DIRECT, timeoutSeconds * 1000 + READ_TIMEOUT_MARGIN_MILLIS);
            try {
                query(connection, sql, params, reader, sink);
            } finally {
                restore(connection, readTimeout);
            }
        });
    }

    /** Puts the connection's read timeout back; a connection the timeout broke is closed already and left to the pool. */
    private static void restore(Connection connection, int readTimeout) {
        try {
            if (!connection.isClosed()) {
                connection.setNetworkTimeout(DIRECT, readTimeout);
            }
        } catch (SQLException e) {
            // broken by the failure being thrown: the pool discards it
        }
    }

    private <T> void query(Connection connection, String sql, List<?> params, RowReader<T> reader,
                           Consumer<? super T> sink) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(TAG + sql)) {
            statement.setQueryTimeout(timeoutSeconds);
            statement.setFetchSize(fetchSize);
            for (int i = 0; i < params.size(); i++) {
                statement.setObject(i + 1, params.get(i));
            }
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    T value = reader.read(rs);
                    if (value != null) {
                        sink.accept(value);
                    }
                }
            }
        }
    }
}
