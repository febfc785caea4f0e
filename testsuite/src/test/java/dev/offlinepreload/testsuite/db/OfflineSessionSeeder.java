package dev.offlinepreload.testsuite.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.TestRealm;

/**
 * Offline sessions in bulk, straight into PostgreSQL: each realm's rows are copies of sessions Keycloak itself created
 * through the token endpoint (so DATA is exactly what that Keycloak version writes), with fresh ids, users spread
 * round-robin, and timestamps spread over time. Inside DATA, every time the templates hold (the authentication time
 * and the start times in the notes, values that production sessions do not share) becomes the copy's own creation
 * time, so DATA does not repeat more than production's does. Columns are copied by name from the
 * template rows, so the same code seeds the Keycloak 24 and the Keycloak 26 schema. One INSERT statement per call
 * writes both tables.
 */
public final class OfflineSessionSeeder implements AutoCloseable {

    /** A realm whose template sessions exist: one real offline session per client. */
    public record Realm(String name, String id, List<String> templateSessionIds) {
    }

    /** What one {@link #seed} call wrote. */
    public record Seeded(int sessions, int clientSessions, int expired, int corrupt) {
        public int valid() {
            return sessions - expired - corrupt;
        }
    }

    private final Connection db;
    private int calls;

    public OfflineSessionSeeder(KeycloakCluster cluster) {
        db = Sql.connect(cluster);
        try (Statement s = db.createStatement()) {
            s.execute("SET synchronous_commit = off"); // bulk seeding: a crash would only lose test data
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot configure the seeding connection", e);
        }
    }

    /**
     * Creates realm {@code name} with {@code clients} public clients (app-1..app-N) and {@code users} users, and logs
     * user1 in once per client with scope offline_access: the templates the clones are copied from.
     */
    public Realm createRealm(KeycloakNode node, String name, int clients, int users) {
        List<String> clientIds = IntStream.rangeClosed(1, clients).mapToObj(i -> "app-" + i).toList();
        TestRealm.create(node, name, clientIds, users);
        List<String> templates = new ArrayList<>();
        for (String clientId : clientIds) {
            OidcClient.TokenResponse login = new OidcClient(node, name, clientId).offlineLogin(TestRealm.username(1), "password");
            if (login.status() != 200) {
                throw new IllegalStateException("Template login to " + name + "/" + clientId + " failed: " + login);
            }
            templates.add(login.sessionId());
        }
        return new Realm(name, realmId(name), templates);
    }

    /**
     * A realm created elsewhere (e.g. by {@link TestRealm}) whose given offline sessions, one per client, serve as the
     * templates.
     */
    public Realm realm(String name, List<String> templateSessionIds) {
        return new Realm(name, realmId(name), List.copyOf(templateSessionIds));
    }

    /** Writes {@code shape.sessions()} offline sessions (and their client sessions) into {@code realm}. */
    public Seeded seed(Realm realm, SeedShape shape) {
        if (shape.clientSessionsPerSession() > realm.templateSessionIds().size()) {
            throw new IllegalArgumentException("realm " + realm.name() + " has only " + realm.templateSessionIds().size()
                    + " template clients, asked for " + shape.clientSessionsPerSession() + " client sessions per session");
        }
        int now = (int) Instant.now().getEpochSecond();
        int expiredBuckets = (int) Math.round(shape.expiredShare() * BUCKETS);
        int corruptBuckets = (int) Math.round(shape.corruptShare() * BUCKETS);
        List<String> clientTemplates = realm.templateSessionIds().subList(0, shape.clientSessionsPerSession());
        List<String> userColumns = columns("offline_user_session");
        List<String> clientColumns = columns("offline_client_session");
        List<String> times = templateTimes(realm.templateSessionIds());
        String sql = "WITH users AS MATERIALIZED ("
                + "   SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM user_entity"
                + "   WHERE realm_id = ? AND service_account_client_link IS NULL),"
                + " s AS MATERIALIZED ("
                + "   SELECT g, md5(? || g)::uuid::text AS id,"
                + "     " + BUCKET + " >= ? AND " + BUCKET + " < ? AS corrupt, (g - 1) / ? AS user_n,"
                + "     CASE WHEN " + BUCKET + " < ? THEN ? - " + SeedShape.OFFLINE_IDLE_TIMEOUT_SECONDS + " - 86400 - g % 86400"
                + "          ELSE ? - (g * 7919) % ? END AS refreshed"
                + "   FROM generate_series(1::bigint, ?) g),"
                + " user_sessions AS ("
                + "   INSERT INTO offline_user_session (" + String.join(", ", userColumns) + ")"
                + "   SELECT " + userValues(userColumns, times) + " FROM s"
                + "   JOIN users u ON u.n = s.user_n % (SELECT count(*) FROM users)"
                + "   JOIN offline_user_session t ON t.user_session_id = ? AND t.offline_flag = '1')"
                + " INSERT INTO offline_client_session (" + String.join(", ", clientColumns) + ")"
                + " SELECT " + clientValues(clientColumns, times) + " FROM s"
                + " JOIN offline_client_session c ON c.offline_flag = '1' AND c.user_session_id IN ("
                + clientTemplates.stream().map(t -> "?").collect(Collectors.joining(", ")) + ")"
                + " JOIN offline_user_session t ON t.user_session_id = c.user_session_id AND t.offline_flag = '1'";
        try (PreparedStatement insert = db.prepareStatement(sql)) {
            int p = 0;
            insert.setString(++p, realm.id());
            insert.setString(++p, realm.name() + "/" + (++calls) + "/" + now + "/");
            insert.setInt(++p, expiredBuckets);
            insert.setInt(++p, expiredBuckets + corruptBuckets);
            insert.setInt(++p, shape.sessionsPerUser());
            insert.setInt(++p, expiredBuckets);
            insert.setInt(++p, now);
            insert.setInt(++p, now);
            insert.setInt(++p, shape.spreadSeconds());
            insert.setInt(++p, shape.sessions());
            insert.setString(++p, realm.templateSessionIds().get(0));
            for (String template : clientTemplates) {
                insert.setString(++p, template);
            }
            int clientSessions = insert.executeUpdate();
            return new Seeded(shape.sessions(), clientSessions, count(shape.sessions(), 0, expiredBuckets),
                    count(shape.sessions(), expiredBuckets, expiredBuckets + corruptBuckets));
        } catch (SQLException e) {
            throw new IllegalStateException("Seeding " + shape + " into realm " + realm.name() + " failed", e);
        }
    }

    /**
     * Rows are classified by a bucket 0..9999 that walks a fixed permutation as g counts up, so every 10,000
     * consecutive sessions hold exactly the asked shares of expired and corrupt ones, spread evenly.
     */
    private static final int BUCKETS = 10_000;
    private static final String BUCKET = "(g * 40503) % " + BUCKETS;

    private static int count(int sessions, int fromBucket, int toBucket) {
        int n = 0;
        for (long g = 1; g <= sessions; g++) {
            long bucket = (g * 40503) % BUCKETS;
            if (bucket >= fromBucket && bucket < toBucket) {
                n++;
            }
        }
        return n;
    }

    /** A copy's creation time: up to a week before its last refresh. */
    private static final String CREATED = "(s.refreshed - (s.g * 104729) % 604800)";

    /**
     * A template's DATA with the copy's creation time in place of each of the templates' {@code times}. The
     * authentication time in the user session's notes can be a second or more before the offline session's creation
     * (the code exchange comes after the login), so it is replaced by the times the templates hold, not by their
     * creation column. Every time maps to the same value, so no replacement can undo another.
     */
    private static String copiedData(String data, List<String> times) {
        String copied = data;
        for (String time : times) {
            copied = "replace(" + copied + ", '" + time + "', " + CREATED + "::text)";
        }
        return copied;
    }

    /**
     * Times in the templates' DATA: the ten-digit numbers within an hour before (or a minute after) the creation of
     * the template sessions, which is when Keycloak wrote them.
     */
    private List<String> templateTimes(List<String> templateSessionIds) {
        String ids = templateSessionIds.stream().map(id -> "?").collect(Collectors.joining(", "));
        String sql = "SELECT t.created_on, t.data, c.data FROM offline_user_session t"
                + " JOIN offline_client_session c ON c.user_session_id = t.user_session_id AND c.offline_flag = '1'"
                + " WHERE t.offline_flag = '1' AND t.user_session_id IN (" + ids + ")";
        try (PreparedStatement s = db.prepareStatement(sql)) {
            for (int i = 0; i < templateSessionIds.size(); i++) {
                s.setString(i + 1, templateSessionIds.get(i));
            }
            Set<String> times = new TreeSet<>();
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    long created = rs.getLong(1);
                    for (String data : List.of(rs.getString(2), rs.getString(3))) {
                        Matcher number = TEN_DIGITS.matcher(data);
                        while (number.find()) {
                            long time = Long.parseLong(number.group());
                            if (time >= created - 3600 && time <= created + 60) {
                                times.add(number.group());
                            }
                        }
                    }
                }
            }
            if (times.isEmpty()) {
                throw new IllegalStateException("No time found in the DATA of template sessions " + templateSessionIds);
            }
            return List.copyOf(times);
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot read the template sessions " + templateSessionIds, e);
        }
    }

    private static final Pattern TEN_DIGITS = Pattern.compile("(?<![0-9A-Za-z])[0-9]{10}(?![0-9A-Za-z])");

    private static String userValues(List<String> columns, List<String> times) {
        return columns.stream().map(column -> switch (column) {
            case "user_session_id" -> "s.id";
            case "user_id" -> "u.id";
            case "last_session_refresh" -> "s.refreshed::int";
            case "created_on" -> CREATED + "::int";
            case "data" -> "CASE WHEN s.corrupt THEN '{\"corrupt' ELSE " + copiedData("t.data", times) + " END";
            default -> "t." + column;
        }).collect(Collectors.joining(", "));
    }

    private static String clientValues(List<String> columns, List<String> times) {
        return columns.stream().map(column -> switch (column) {
            case "user_session_id" -> "s.id";
            case "timestamp" -> "s.refreshed::int";
            case "data" -> copiedData("c.data", times);
            default -> "c." + column;
        }).collect(Collectors.joining(", "));
    }

    private List<String> columns(String table) {
        String sql = "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                + " AND table_name = ? ORDER BY ordinal_position";
        try (PreparedStatement s = db.prepareStatement(sql)) {
            s.setString(1, table);
            List<String> columns = new ArrayList<>();
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    columns.add(rs.getString(1).toLowerCase());
                }
            }
            if (columns.isEmpty()) {
                throw new IllegalStateException("Table " + table + " not found: has Keycloak created its schema?");
            }
            return columns;
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot read the columns of " + table, e);
        }
    }

    private String realmId(String name) {
        try (PreparedStatement s = db.prepareStatement("SELECT id FROM realm WHERE name = ?")) {
            s.setString(1, name);
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("No realm " + name);
                }
                return rs.getString(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot read the id of realm " + name, e);
        }
    }

    /**
     * Seeding millions of sessions at once (benchmarks), within minutes: until {@link BulkLoad#close()} the two session
     * tables lose their non-unique indexes (their primary keys stay and grow as in production) and PostgreSQL writes
     * no full-page images and checkpoints only every 8 GB of WAL; close() builds the same indexes again from their
     * definitions (a sorted build each) and resets the two settings. Row by row, every insert into those indexes hit a
     * random page of several GB, and after each checkpoint (every 1 GB of WAL) every first change of a page wrote the
     * whole page to the WAL again: 3M sessions took 7 minutes, getting slower as the indexes grew. Needs a superuser
     * (the test containers' user is one); for a throwaway database only.
     */
    public BulkLoad bulkLoad() {
        List<String> definitions = new ArrayList<>();
        List<String> names = new ArrayList<>();
        String sql = "SELECT ic.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i"
                + " JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid"
                + " WHERE t.relname IN ('offline_user_session', 'offline_client_session')"
                + " AND t.relnamespace = current_schema()::regnamespace AND NOT i.indisunique ORDER BY ic.relname";
        try (Statement s = db.createStatement()) {
            try (ResultSet rs = s.executeQuery(sql)) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                    definitions.add(rs.getString(2));
                }
            }
            s.execute("ALTER SYSTEM SET full_page_writes = off");
            s.execute("ALTER SYSTEM SET max_wal_size = '8GB'");
            s.execute("SELECT pg_reload_conf()");
            for (String name : names) {
                s.execute("DROP INDEX \"" + name + "\"");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot prepare the session tables for bulk seeding", e);
        }
        return new BulkLoad(definitions);
    }

    /** Undoes {@link #bulkLoad()}: the indexes built again, the settings reset. */
    public final class BulkLoad implements AutoCloseable {
        private final List<String> indexDefinitions;

        private BulkLoad(List<String> indexDefinitions) {
            this.indexDefinitions = List.copyOf(indexDefinitions);
        }

        /** The non-unique indexes dropped, as CREATE INDEX statements. */
        public List<String> indexDefinitions() {
            return indexDefinitions;
        }

        @Override
        public void close() {
            try (Statement s = db.createStatement()) {
                s.execute("SET maintenance_work_mem = '1GB'");
                for (String definition : indexDefinitions) {
                    s.execute(definition);
                }
                s.execute("ALTER SYSTEM RESET full_page_writes");
                s.execute("ALTER SYSTEM RESET max_wal_size");
                s.execute("SELECT pg_reload_conf()");
            } catch (SQLException e) {
                throw new IllegalStateException("Cannot restore the session tables after bulk seeding", e);
            }
        }
    }

    @Override
    public void close() {
        try {
            db.close();
        } catch (SQLException ignored) {
            // closing a seeding connection
        }
    }
}
