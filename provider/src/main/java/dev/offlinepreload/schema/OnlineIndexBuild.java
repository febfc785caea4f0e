package dev.offlinepreload.schema;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.offlinepreload.schema.IndexState.IndexWork;
import org.jboss.logging.Logger;
import org.keycloak.connections.jpa.JpaConnectionProviderFactory;

/**
 * Builds the indexes the changelog left out, after startup, on a background thread, outside Keycloak's database lock,
 * without blocking writes; then records their changesets as ran.
 *
 * <p>One node of the cluster builds: the one whose dedicated connection gets the database's named lock
 * ({@link IndexDialect#tryLock()}). The others leave it to that node. The lock belongs to the connection, so when the
 * building node dies the database ends its session, stops the build and releases the lock; an INVALID leftover is
 * dropped and built again at the next start. The connection runs in autocommit: a concurrent build cannot run in a
 * transaction, and an open transaction on the table would make it wait.
 */
final class OnlineIndexBuild implements Runnable {

    static final String THREAD_NAME = "offpreload-index-build";
    private static final Logger log = Logger.getLogger(OnlineIndexBuild.class);
    private static final Duration PROGRESS_INTERVAL = Duration.ofSeconds(10);
    /**
     * Every statement but the build itself (lock, settings, state, progress) fails after this long instead of waiting
     * for a hung database. CREATE INDEX has none: its length grows with the table, and a build cut short leaves an
     * INVALID index (PostgreSQL) to drop and build again at the next start.
     */
    static final int QUERY_TIMEOUT_SECONDS = 60;

    private final JpaConnectionProviderFactory jpa;
    private final IndexDialect dialect;
    private final String node;
    private final ChangesetRecorder changesets;

    OnlineIndexBuild(JpaConnectionProviderFactory jpa, IndexDialect dialect, String node, ChangesetRecorder changesets) {
        this.jpa = jpa;
        this.dialect = dialect;
        this.node = node;
        this.changesets = changesets;
    }

    /** Starts the build on a daemon thread and returns at once: startup and readiness do not wait for it. */
    void start() {
        Thread thread = new Thread(this, THREAD_NAME);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void run() {
        try {
            if (readState().work().isEmpty()) {
                log.debugf("Offline-session indexes: all built and recorded, nothing to do on node %s", node);
                return;
            }
            try (Connection connection = jpa.getConnection()) {
                connection.setAutoCommit(true);
                if (!tryLock(connection)) {
                    log.infof("Offline-session indexes: another node holds the build lock and builds them; node %s leaves "
                            + "them to it", node);
                    return;
                }
                try {
                    // Read again under the lock: a node that held it before may have done part of the work.
                    List<IndexWork> work = readState().work();
                    apply(connection, dialect.buildSessionSettings());
                    for (IndexWork item : work) {
                        perform(connection, item);
                    }
                } finally {
                    apply(connection, dialect.resetSessionSettings());
                    execute(connection, dialect.unlock());
                }
            }
        } catch (SQLException | RuntimeException e) {
            log.errorf(e, "Offline-session indexes: the online build could not run on node %s; Keycloak works without "
                    + "them, only its expiration task is slower. The next start tries again.", node);
        }
    }

    private IndexState readState() throws SQLException {
        try (Connection connection = jpa.getConnection()) {
            connection.setAutoCommit(true); // no transaction left open that a concurrent build would wait for
            return IndexState.read(connection, jpa.getSchema(), dialect);
        }
    }

    private boolean tryLock(Connection connection) throws SQLException {
        try (Statement s = bounded(connection.createStatement()); ResultSet rs = s.executeQuery(dialect.tryLock())) {
            return rs.next() && rs.getBoolean(1); // PostgreSQL: boolean; MySQL/MariaDB: 1, 0 or NULL
        }
    }

    private static void apply(Connection connection, List<String> settings) {
        for (String setting : settings) {
            try {
                execute(connection, setting);
            } catch (SQLException e) {
                log.debugf("Offline-session indexes: '%s' not applied (%s)", setting, e.getMessage());
            }
        }
    }

    /** One index: a failure is logged with the SQL to run by hand, and the next index is still tried. */
    private void perform(Connection connection, IndexWork item) {
        String name = item.index().name();
        String drop = dialect.dropInvalid(item.index(), jpa.getSchema());
        String create = dialect.create(item.index(), jpa.getSchema());
        long started = System.nanoTime();
        try {
            if (item.dropInvalid()) {
                log.infof("Offline-session index %s: dropping the INVALID leftover of an interrupted build on node %s: %s",
                        name, node, drop);
                build(connection, drop);
            }
            if (item.build()) {
                log.infof("Offline-session index %s: building on node %s in the background, writes go on: %s",
                        name, node, create);
                try (BuildProgress progress = new BuildProgress(name, connection, started)) {
                    build(connection, create);
                }
                log.infof("Offline-session index %s: built on node %s in %s", name, node, elapsed(started));
            }
            if (item.record()) {
                changesets.markRan(item.index().changesetId());
                log.infof("Offline-session index %s: changeset %s recorded as ran", name, item.index().changesetId());
            }
        } catch (Exception e) {
            log.errorf("Offline-session index %s: the online build failed on node %s after %s: %s. Keycloak works without "
                            + "it, only its expiration task is slower; the next start tries again. To build it by hand: %s%s;",
                    name, node, elapsed(started), e.getMessage(), dialect == IndexDialect.POSTGRESQL ? drop + "; " : "", create);
            log.debugf(e, "Offline-session index %s: the failure", name);
        }
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement s = bounded(connection.createStatement())) {
            s.execute(sql);
        }
    }

    /** The build itself, and the drop of an INVALID leftover: no timeout (see {@link #QUERY_TIMEOUT_SECONDS}). */
    private static void build(Connection connection, String sql) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute(sql);
        }
    }

    static <S extends Statement> S bounded(S statement) throws SQLException {
        statement.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
        return statement;
    }

    private static String elapsed(long startedNanos) {
        return Duration.ofNanos(System.nanoTime() - startedNanos).withNanos(0).toString().substring(2).toLowerCase();
    }

    /** Logs every 10 s that the build goes on, with PostgreSQL's own progress report of the building connection. */
    private final class BuildProgress implements AutoCloseable {

        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, THREAD_NAME + "-progress");
            thread.setDaemon(true);
            return thread;
        });

        BuildProgress(String name, Connection building, long started) throws SQLException {
            Integer backend = null;
            if (dialect.progressQuery() != null) {
                try (Statement s = bounded(building.createStatement()); ResultSet rs = s.executeQuery(dialect.connectionIdQuery())) {
                    rs.next();
                    backend = rs.getInt(1);
                }
            }
            Integer pid = backend;
            long interval = PROGRESS_INTERVAL.toMillis();
            timer.scheduleAtFixedRate(() -> log.infof("Offline-session index %s: still building on node %s after %s%s",
                    name, node, elapsed(started), pid == null ? "" : ", " + phase(pid)), interval, interval, TimeUnit.MILLISECONDS);
        }

        private String phase(int pid) {
            try (Connection connection = jpa.getConnection();
                 PreparedStatement s = bounded(connection.prepareStatement(dialect.progressQuery()))) {
                connection.setAutoCommit(true);
                s.setInt(1, pid);
                try (ResultSet rs = s.executeQuery()) {
                    return rs.next() ? rs.getString(1) : "no progress reported";
                }
            } catch (SQLException e) {
                return "progress unknown (" + e.getMessage() + ")";
            }
        }

        @Override
        public void close() {
            timer.shutdownNow();
        }
    }
}
