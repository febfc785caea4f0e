package dev.offlinepreload.testsuite;

import dev.offlinepreload.testsuite.cluster.TestPaths;
import org.junit.jupiter.api.Tag;

/** {@link VolatileModeIT} on Keycloak 26.5 (the version in the root pom). */
@Tag("older-minor")
class VolatileModeOn26_5IT extends VolatileModeIT {

    @Override
    String keycloakVersion() {
        return TestPaths.olderMinor("26.5");
    }
}
