package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.offlinepreload.testsuite.cluster.DockerRequirement;
import dev.offlinepreload.testsuite.cluster.Images;
import dev.offlinepreload.testsuite.cluster.NodeLog;
import dev.offlinepreload.testsuite.cluster.TestPaths;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * Keycloak's development mode (H2 file database), at the shipped defaults: the changelog runs there too and the
 * provider is active. H2 lets one process at a time open the file, so Keycloak is stopped first and the database
 * copied out and read here.
 */
class H2DevModeIT {

    private static String logs;
    private static Path database;

    @BeforeAll
    static void runDevModeThenReadItsDatabase() throws Exception {
        DockerRequirement.check();
        NodeLog log = new NodeLog(TestPaths.logDir().resolve(H2DevModeIT.class.getSimpleName()).resolve("dev.log"));
        try (GenericContainer<?> keycloak = new GenericContainer<>(Images.keycloakWithProvider(""))
                .withCommand("start-dev", "--health-enabled=true")
                .withEnv("KC_DB_USERNAME", "sa")
                .withEnv("KC_DB_PASSWORD", "password")
                .withExposedPorts(8080, 9000)
                .withLogConsumer(log)
                .waitingFor(Wait.forHttp("/health/ready").forPort(9000).forStatusCode(200)
                        .withStartupTimeout(Duration.ofMinutes(5)))) {
            keycloak.start();
            var docker = DockerClientFactory.lazyClient();
            docker.stopContainerCmd(keycloak.getContainerId()).withTimeout(60).exec(); // H2 closes its file
            logs = String.join("\n", log.lines());
            database = Files.createTempDirectory("keycloak-h2");
            try (InputStream tar = docker.copyArchiveFromContainerCmd(keycloak.getContainerId(), "/opt/keycloak/data/h2").exec();
                 TarArchiveInputStream entries = new TarArchiveInputStream(tar)) {
                TarArchiveEntry entry;
                while ((entry = entries.getNextEntry()) != null) {
                    if (entry.isFile()) {
                        Files.copy(entries, database.resolve(Path.of(entry.getName()).getFileName()));
                    }
                }
            }
        }
    }

    private static List<String> query(String sql) throws Exception {
        String url = "jdbc:h2:file:" + database.resolve("keycloakdb") + ";IFEXISTS=TRUE";
        try (Connection db = DriverManager.getConnection(url, "sa", "password");
             Statement s = db.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            List<String> rows = new ArrayList<>();
            while (rs.next()) {
                rows.add(rs.getString(1) + (rs.getMetaData().getColumnCount() > 1 ? "|" + rs.getString(2) : ""));
            }
            return rows;
        }
    }

    @Test
    void theIndexesExistAndTheirChangesetsRan() throws Exception {
        assertThat(query("SELECT INDEX_NAME FROM INFORMATION_SCHEMA.INDEXES WHERE INDEX_NAME LIKE 'OFFPRELOAD%' ORDER BY 1"))
                .containsExactly("OFFPRELOAD_USS_EXPIRY_CREATED", "OFFPRELOAD_USS_EXPIRY_REFRESH");
        assertThat(query("SELECT ID, EXECTYPE FROM DATABASECHANGELOG_OFFPRELOAD ORDER BY ORDEREXECUTED"))
                .containsExactly("offpreload-1-uss-expiry-refresh|EXECUTED", "offpreload-2-uss-expiry-created|EXECUTED");
    }

    /** Dev mode keeps sessions persistent, Keycloak's default, where preloading is opt-in: nothing of it starts. */
    @Test
    void theProviderIsActiveInDevModeAndByDefaultDoesNotPreloadPersistentSessions() {
        assertThat(logs).contains("Offline session preloader active as user-sessions provider 'offline-preload'")
                .contains("Offline session preloading is off: with persistent sessions")
                .contains("spi-user-sessions--offline-preload--preloading=auto")
                .doesNotContain("Offline session preload on");
    }
}
