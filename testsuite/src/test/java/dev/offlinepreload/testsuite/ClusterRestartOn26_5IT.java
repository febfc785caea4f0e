package dev.offlinepreload.testsuite;

import dev.offlinepreload.testsuite.cluster.TestPaths;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;

/** {@link ClusterRestartIT} on Keycloak 26.5 (the version in the root pom). */
@Tag("older-minor")
@Order(Integer.MAX_VALUE) // last in the order: the second lane takes it first (docs/testing.md)
class ClusterRestartOn26_5IT extends ClusterRestartIT {

    @Override
    String keycloakVersion() {
        return TestPaths.olderMinor("26.5");
    }
}
