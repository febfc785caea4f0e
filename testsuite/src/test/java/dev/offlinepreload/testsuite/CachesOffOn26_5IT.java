package dev.offlinepreload.testsuite;

import dev.offlinepreload.testsuite.cluster.TestPaths;
import org.junit.jupiter.api.Tag;

/** {@link CachesOffIT} on Keycloak 26.5 (the version in the root pom). */
@Tag("older-minor")
class CachesOffOn26_5IT extends CachesOffIT {

    @Override
    String keycloakVersion() {
        return TestPaths.olderMinor("26.5");
    }
}
