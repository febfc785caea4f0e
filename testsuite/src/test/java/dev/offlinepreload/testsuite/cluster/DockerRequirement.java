package dev.offlinepreload.testsuite.cluster;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;

/** Cluster tests need a Docker engine: in CI they fail without one, on a laptop they skip and say why. */
public final class DockerRequirement {

    private DockerRequirement() {
    }

    public static void check() {
        boolean available = DockerClientFactory.instance().isDockerAvailable();
        String message = "No Docker engine answers: the cluster tests start real Keycloak and PostgreSQL containers. "
                + "Start Docker (or run `bash .ci/run`, which installs and starts one) and try again.";
        if (!available && isCi()) {
            fail(message + " CI=true, so this is a failure, not a skip.");
        }
        Assumptions.assumeTrue(available, message);
    }

    private static boolean isCi() {
        String ci = System.getenv("CI");
        return ci != null && !ci.isBlank() && !"false".equalsIgnoreCase(ci);
    }
}
