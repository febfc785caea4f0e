package dev.offlinepreload.testsuite;

import dev.offlinepreload.testsuite.cluster.TestPaths;
import org.junit.jupiter.api.Tag;

/** {@link CachesOffIT} on Keycloak 26.4 (the version in the root pom). */
@Tag("older-minor")
class CachesOffOn26_4IT extends CachesOffIT {

    @Override
    String keycloakVersion() {
        return TestPaths.olderMinor("26.4");
    }
}
