package dev.offlinepreload.testsuite.cluster;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.JdbcDatabaseContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.lifecycle.Startables;
import org.testcontainers.mariadb.MariaDBContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.MountableFile;

/**
 * PostgreSQL plus N Keycloak nodes on one Docker network, all with this provider installed. {@link #start()} returns
 * once every node is ready and has logged a cluster view of N members.
 */
public final class KeycloakCluster implements AutoCloseable {

    /** Every node answers under the same hostname, so a token issued by one node is valid on the others. */
    public static final String HOSTNAME = "http://keycloak.cluster.test:8080";
    public static final String ADMIN_USER = "admin";
    public static final String ADMIN_PASSWORD = "admin";
    public static final String DB_NAME = "keycloak";
    /** The database's name on the cluster network. */
    public static final String DB_HOST = "database";
    public static final String DB_USER = "keycloak";
    public static final String DB_PASSWORD = "keycloak";

    private final String name;
    private final Network network = Network.newNetwork();
    private final JdbcDatabaseContainer<?> database;
    private final List<KeycloakNode> nodes = new ArrayList<>();
    private final String dbSchema;
    private final String keycloakVersion;

    private KeycloakCluster(Builder builder) {
        this.name = builder.name;
        this.dbSchema = builder.dbSchema;
        this.keycloakVersion = builder.keycloakVersion;
        deleteLogsOfEarlierRuns(logDir());
        this.database = (builder.mariadb
                ? new MariaDBContainer(DockerImageName.parse(Images.mariadb()).asCompatibleSubstituteFor("mariadb"))
                : new PostgreSQLContainer(DockerImageName.parse(Images.postgres()).asCompatibleSubstituteFor("postgres")))
                .withNetwork(network)
                .withNetworkAliases(DB_HOST)
                .withDatabaseName(DB_NAME)
                .withUsername(DB_USER)
                .withPassword(DB_PASSWORD)
                .withSharedMemorySize(256L * 1024 * 1024) // PostgreSQL's sorts and parallel work on large test tables
                .withLogConsumer(new NodeLog(logDir().resolve("database.log")));
        if (builder.pgStatStatements) {
            // Three nodes' connection pools (Keycloak's default: up to 100 each) outgrow PostgreSQL's default of 100
            // connections in a restart window's backlog; the benchmark's own statistics query was then refused.
            List<String> command = new ArrayList<>(List.of("postgres", "-c", "fsync=off", "-c",
                    "shared_preload_libraries=pg_stat_statements", "-c", "max_connections=400"));
            builder.sharedBuffers.ifPresent(size -> command.addAll(List.of("-c", "shared_buffers=" + size)));
            database.withCommand(command.toArray(String[]::new));
        }
        String db = builder.mariadb ? "mariadb" : "postgres";
        String image = builder.buildAtStartupFrom != null ? builder.buildAtStartupFrom
                : builder.keycloakImage != null ? builder.keycloakImage
                : Images.keycloakWithProvider(builder.keycloakVersion, db, builder.buildOptions);
        for (int i = 1; i <= builder.nodes; i++) {
            String nodeName = "node" + i;
            Map<String, String> env = new LinkedHashMap<>(baseEnv(builder.heap, builder.javaOptions, db));
            env.put("KC_DB_SCHEMA", builder.dbSchema);
            env.putAll(builder.env);
            env.putAll(builder.nodeEnv.getOrDefault(i, Map.of()));
            env.values().removeIf(Objects::isNull);
            KeycloakNode node = new KeycloakNode(image, builder.keycloakVersion, nodeName, network, env,
                    new NodeLog(logDir().resolve(nodeName + ".log")));
            node.readinessPort(builder.readinessPort);
            if (builder.buildAtStartupFrom != null) {
                node.withCopyFileToContainer(MountableFile.forHostPath(TestPaths.providerJar()),
                        "/opt/keycloak/providers/keycloak-offline-session-preloader.jar");
                List<String> start = new ArrayList<>(List.of("start"));
                start.addAll(Images.buildOptions(db, builder.buildOptions));
                node.withCommand(start.toArray(String[]::new));
            }
            if (builder.keycloakConf != null) {
                node.withCopyToContainer(Transferable.of(builder.keycloakConf),
                        "/opt/keycloak/conf/keycloak.conf");
            }
            nodes.add(node);
        }
    }

    private static void deleteLogsOfEarlierRuns(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.toList()) {
                Files.deleteIfExists(file);
            }
        } catch (NoSuchFileException first) {
            // first run: nothing to delete
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether its nodes run Keycloak {@code minor} (e.g. "26.4"); the project's own version counts as none. */
    public boolean runsMinor(String minor) {
        return keycloakVersion != null && keycloakVersion.startsWith(minor + ".");
    }

    /** The option {@code preloading}, which every node here sets to true unless a test removes it. */
    public static final String PRELOADING = optionEnv("preloading");

    /** The env var that sets this provider's option {@code option} (e.g. hold-readiness). */
    public static String optionEnv(String option) {
        return "KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__" + option.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    private static Map<String, String> baseEnv(String heap, String javaOptions, String db) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KC_DB_URL", "mariadb".equals(db) ? "jdbc:mariadb://" + DB_HOST + ":3306/" + DB_NAME
                : "jdbc:postgresql://" + DB_HOST + ":5432/" + DB_NAME);
        env.put("KC_DB_USERNAME", DB_USER);
        env.put("KC_DB_PASSWORD", DB_PASSWORD);
        env.put("KC_HOSTNAME", HOSTNAME);
        env.put("KC_HTTP_ENABLED", "true");
        env.put("KC_BOOTSTRAP_ADMIN_USERNAME", ADMIN_USER);
        env.put("KC_BOOTSTRAP_ADMIN_PASSWORD", ADMIN_PASSWORD);
        env.put("KC_LOG_LEVEL", "INFO,dev.offlinepreload:DEBUG");
        env.put("JAVA_OPTS_KC_HEAP", heap);
        if (!javaOptions.isBlank()) {
            env.put("JAVA_OPTS_APPEND", javaOptions);
        }
        // The tests are about what preloading does, with persistent sessions (Keycloak's default) too, where it is
        // opt-in: an IT of the shipped default removes this (env(PRELOADING, null)), as VolatileModeIT does.
        env.put(PRELOADING, "true");
        // The testsuite's Failsafe run shortens the quiet start (testsuite/pom.xml); the benchmark runs the default.
        String quietStart = System.getProperty("offlinepreload.quietStartSeconds", "");
        if (!quietStart.isBlank()) {
            env.put(optionEnv("quiet-start-seconds"), quietStart);
        }
        return env;
    }

    /**
     * Starts the database, then node 1 alone (it creates the schema), then the others together, and waits until
     * every node sees all of them.
     */
    public KeycloakCluster start() {
        database.start();
        if (dbSchema != null) {
            try (Connection db = database.createConnection(""); Statement s = db.createStatement()) {
                s.execute("CREATE SCHEMA " + dbSchema);
            } catch (SQLException e) {
                throw new IllegalStateException("Cannot create schema " + dbSchema, e);
            }
        }
        nodes.get(0).start();
        Startables.deepStart(nodes.subList(1, nodes.size())).join();
        awaitView(nodes.size());
        return this;
    }

    /**
     * Stops every node (gracefully, as an orchestrator would), then starts them again like {@link #start()}: the
     * caches are empty afterwards, the database keeps everything.
     */
    public void restartAll() {
        stopAll();
        startAgain();
    }

    /** Stops every node gracefully, one after the other, as an orchestrator would. */
    public void stopAll() {
        for (KeycloakNode node : nodes) {
            node.stopGracefully();
        }
    }

    /** Starts every stopped node again like {@link #start()}: the first alone, then the others together. */
    public void startAgain() {
        nodes.get(0).start();
        Startables.deepStart(nodes.subList(1, nodes.size())).join();
        awaitView(nodes.size());
    }

    /** Waits until every running node's latest cluster view has exactly {@code members} members. */
    public void awaitView(int members) {
        await("cluster view of " + members + " on every running node")
                .atMost(Duration.ofMinutes(3))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> runningNodes().stream().allMatch(n -> n.viewSize() == members));
    }

    /** Where the database's and each node's log are written ({@code database.log}, {@code node1.log}, ...). */
    public Path logDir() {
        return TestPaths.logDir().resolve(name);
    }

    public List<KeycloakNode> nodes() {
        return List.copyOf(nodes);
    }

    public KeycloakNode node(int oneBased) {
        return nodes.get(oneBased - 1);
    }

    public List<KeycloakNode> runningNodes() {
        return nodes.stream().filter(KeycloakNode::isRunning).collect(Collectors.toList());
    }

    public JdbcDatabaseContainer<?> database() {
        return database;
    }

    /** JDBC URL of the database as seen from the test JVM. */
    public String jdbcUrl() {
        return database.getJdbcUrl();
    }

    public void pauseDatabase() {
        ContainerPause.pause(database.getContainerId());
    }

    public void unpauseDatabase() {
        ContainerPause.unpause(database.getContainerId());
    }

    /** For clean-up after a test that may have failed while the database was paused. */
    public void unpauseDatabaseIfPaused() {
        var state = DockerClientFactory.lazyClient().inspectContainerCmd(database.getContainerId()).exec().getState();
        if (Boolean.TRUE.equals(state.getPaused())) {
            unpauseDatabase();
        }
    }

    @Override
    public void close() {
        for (KeycloakNode node : nodes) {
            node.stop();
            node.log().close();
        }
        database.stop();
        network.close();
    }

    public static final class Builder {
        private final String name;
        private int nodes = 3;
        private String heap = "-Xms128m -Xmx1g";
        private String javaOptions = System.getProperty("offlinepreload.nodeJavaOptions", "");
        private final Map<String, String> env = new LinkedHashMap<>();
        private final Map<Integer, Map<String, String>> nodeEnv = new LinkedHashMap<>();
        private String keycloakConf;
        private String buildOptions = "";
        private boolean pgStatStatements;
        private Optional<String> sharedBuffers = Optional.empty();
        private boolean mariadb;
        private String keycloakImage;
        private String buildAtStartupFrom;
        private int readinessPort = KeycloakNode.MANAGEMENT_PORT;
        private String dbSchema;
        private String keycloakVersion;

        private Builder(String name) {
            this.name = name;
        }

        public Builder nodes(int count) {
            this.nodes = count;
            return this;
        }

        /** JVM heap flags for every node, e.g. {@code -Xms1g -Xmx2g}. */
        public Builder heap(String flags) {
            this.heap = flags;
            return this;
        }

        /**
         * JVM options appended to every node's (JAVA_OPTS_APPEND). The default is the system property
         * {@code offlinepreload.nodeJavaOptions}: the testsuite's Failsafe run sets it so that short-lived test nodes
         * skip the optimising compiler, which halves a node start's CPU on a 2-core machine (docs/testing.md); the
         * benchmark leaves it unset, so its nodes run as in production.
         */
        public Builder javaOptions(String options) {
            this.javaOptions = options;
            return this;
        }

        /**
         * A Keycloak setting for every node, as an env var: {@code KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__...};
         * {@code null} removes one of the defaults.
         */
        public Builder env(String key, String value) {
            env.put(key, value);
            return this;
        }

        /** A setting for one node only (1-based), e.g. a bad value on node 2. */
        public Builder nodeEnv(int node, String key, String value) {
            nodeEnv.computeIfAbsent(node, n -> new LinkedHashMap<>()).put(key, value);
            return this;
        }

        /** The content of conf/keycloak.conf on every node. */
        public Builder keycloakConf(String content) {
            this.keycloakConf = content;
            return this;
        }

        /** Extra {@code kc.sh build} options, e.g. {@code --features-disabled=persistent-user-sessions}. */
        public Builder buildOptions(String options) {
            this.buildOptions = options;
            return this;
        }

        /**
         * Runs this image as it is instead of this provider's image (e.g. stock Keycloak, or an older version for a
         * comparison); it must have been built for the cluster's database.
         */
        public Builder keycloakImage(String image) {
            this.keycloakImage = image;
            return this;
        }

        /**
         * Runs {@code baseImage} (a Keycloak without this provider) with the jar copied into providers/ and plain
         * {@code kc.sh start} with the build options: Keycloak builds at startup, as it does for operators who do not
         * pre-build an image, and the build's own log lines land in the node's log.
         */
        public Builder buildAtStartup(String baseImage) {
            this.buildAtStartupFrom = baseImage;
            return this;
        }

        /**
         * Runs this provider on another Keycloak version than the project's (e.g. {@link TestPaths#olderMinor}); null
         * (the default) for the project's own.
         */
        public Builder keycloakVersion(String version) {
            this.keycloakVersion = version;
            return this;
        }

        /** Where /health/ready answers: the management port (9000) since Keycloak 25, the HTTP port (8080) before. */
        public Builder readinessPort(int port) {
            this.readinessPort = port;
            return this;
        }

        /**
         * Keycloak's tables in a schema of their own ({@code db-schema}), created before the first node starts. The
         * database user's search path does not hold it, so every statement has to name it.
         */
        public Builder dbSchema(String schema) {
            this.dbSchema = schema;
            return this;
        }

        /** MariaDB instead of PostgreSQL (Keycloak built with --db=mariadb). */
        public Builder mariadb() {
            this.mariadb = true;
            return this;
        }

        /** Loads pg_stat_statements, so a test can count the statements Keycloak ran. */
        public Builder pgStatStatements() {
            this.pgStatStatements = true;
            return this;
        }

        /**
         * PostgreSQL's {@code shared_buffers} (with {@link #pgStatStatements}), as a production server sizes it: the
         * benchmark's tables then stay in PostgreSQL's own buffers rather than being copied in from the OS cache at
         * every read.
         */
        public Builder sharedBuffers(String size) {
            this.sharedBuffers = Optional.of(size);
            return this;
        }

        public KeycloakCluster build() {
            DockerRequirement.check();
            return new KeycloakCluster(this);
        }
    }
}
