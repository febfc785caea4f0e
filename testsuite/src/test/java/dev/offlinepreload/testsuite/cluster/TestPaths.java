package dev.offlinepreload.testsuite.cluster;

import java.nio.file.Files;
import java.nio.file.Path;

/** Paths and the older Keycloak versions handed in by the Failsafe configuration in testsuite/pom.xml. */
public final class TestPaths {

    private TestPaths() {
    }

    public static Path repoRoot() {
        return Path.of(property("offlinepreload.repoRoot"));
    }

    public static Path providerJar() {
        Path jar = Path.of(property("offlinepreload.providerJar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("Provider jar " + jar + " is missing: run the tests with `./mvnw verify`");
        }
        return jar;
    }

    public static Path logDir() {
        return Path.of(property("offlinepreload.logDir"));
    }

    /**
     * The version of an older Keycloak minor the ITs of what differs between minors also run on
     * ({@code offlinepreload.keycloak.<minor>}, from the root pom's {@code keycloak<minor>.version}), e.g. "26.5.6" for "26.5".
     */
    public static String olderMinor(String minor) {
        return property("offlinepreload.keycloak." + minor);
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("System property " + name + " is not set: run the tests through Maven");
        }
        return value;
    }
}
