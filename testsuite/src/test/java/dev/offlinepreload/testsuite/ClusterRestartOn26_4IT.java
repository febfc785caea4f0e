package dev.offlinepreload.testsuite;

import dev.offlinepreload.testsuite.cluster.TestPaths;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;

/** {@link ClusterRestartIT} on Keycloak 26.4 (the version in the root pom). */
@Tag("older-minor")
@Order(1) // the longest class of the suite: first; the other ClusterRestart classes second and third
class ClusterRestartOn26_4IT extends ClusterRestartIT {

    @Override
    String keycloakVersion() {
        return TestPaths.olderMinor("26.4");
    }
}
