package dev.offlinepreload.testsuite;

import dev.offlinepreload.testsuite.cluster.TestPaths;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;

/** {@link ClusterRestartIT} on Keycloak 26.5 (the version in the root pom). */
@Tag("older-minor")
@Order(3) // third: one lane runs the three ClusterRestart classes one after the other (docs/testing.md)
class ClusterRestartOn26_5IT extends ClusterRestartIT {

    @Override
    String keycloakVersion() {
        return TestPaths.olderMinor("26.5");
    }
}
