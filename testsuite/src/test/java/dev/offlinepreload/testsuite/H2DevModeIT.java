package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import dev.offlinepreload.testsuite.cluster.DockerRequirement;
import dev.offlinepreload.testsuite.cluster.Images;
import dev.offlinepreload.testsuite.cluster.NodeLog;
import dev.offlinepreload.testsuite.cluster.TestPaths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/** Keycloak's development mode (H2 file database): the changelog runs there too and the provider is active. */
class H2DevModeIT {

    private static GenericContainer<?> keycloak;

    @BeforeAll
    static void startDevMode() {
        DockerRequirement.check();
        NodeLog log = new NodeLog(TestPaths.logDir().resolve(H2DevModeIT.class.getSimpleName()).resolve("dev.log"));
        keycloak = new GenericContainer<>(Images.keycloakWithProvider(""))
                .withCommand("start-dev", "--health-enabled=true")
                .withEnv("KC_DB_USERNAME", "sa")
                .withEnv("KC_DB_PASSWORD", "password")
                // Lets a second process (H2's shell, below) open the database file while Keycloak runs.
                .withEnv("KC_DB_URL_PROPERTIES", ";AUTO_SERVER=TRUE")
                .withExposedPorts(8080, 9000)
                .withLogConsumer(log)
                .waitingFor(Wait.forHttp("/health/ready").forPort(9000).forStatusCode(200)
                        .withStartupTimeout(Duration.ofMinutes(5)));
        keycloak.start();
    }

    @AfterAll
    static void stop() {
        if (keycloak != null) {
            keycloak.stop();
        }
    }

    private static String h2(String sql) throws Exception {
        ExecResult result = keycloak.execInContainer("sh", "-c", "java -cp /opt/keycloak/lib/lib/main/com.h2database.h2-*.jar"
                + " org.h2.tools.Shell -url 'jdbc:h2:file:/opt/keycloak/data/h2/keycloakdb;AUTO_SERVER=TRUE'"
                + " -user sa -password password -sql \"" + sql + "\"");
        assertThat(result.getExitCode()).as("H2 shell: %s", result.getStderr()).isZero();
        return result.getStdout();
    }

    @Test
    void theIndexesExistAndTheirChangesetsRan() throws Exception {
        assertThat(h2("SELECT INDEX_NAME FROM INFORMATION_SCHEMA.INDEXES WHERE INDEX_NAME LIKE 'OFFPRELOAD%' ORDER BY 1"))
                .contains("OFFPRELOAD_USS_EXPIRY_CREATED", "OFFPRELOAD_USS_EXPIRY_REFRESH");
        assertThat(h2("SELECT ID, EXECTYPE FROM DATABASECHANGELOG_OFFPRELOAD ORDER BY ORDEREXECUTED"))
                .containsPattern("offpreload-1-uss-expiry-refresh\\s*\\|\\s*EXECUTED")
                .containsPattern("offpreload-2-uss-expiry-created\\s*\\|\\s*EXECUTED")
                .doesNotContain("drop-invalid"); // those are for PostgreSQL only
    }

    @Test
    void thePreloaderRunsInDevModeToo() {
        assertThat(keycloak.getLogs()).contains("Offline session preloader active as user-sessions provider 'offline-preload'")
                .contains("Offline session preload on");
    }
}
