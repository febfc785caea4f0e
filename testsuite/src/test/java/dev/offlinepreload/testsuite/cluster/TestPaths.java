package dev.offlinepreload.testsuite.cluster;

import java.nio.file.Files;
import java.nio.file.Path;

/** Paths and the Keycloak version handed in by the Failsafe configuration in testsuite/pom.xml. */
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

    /** The system property that names another Keycloak version than the project's (see {@link #otherKeycloakVersion}). */
    public static final String KEYCLOAK_VERSION = "offlinepreload.keycloakVersion";

    /**
     * The Keycloak version the Failsafe execution of an older minor runs its ITs on
     * ({@code offlinepreload.keycloakVersion}), or null for the project's own.
     */
    public static String otherKeycloakVersion() {
        String version = System.getProperty(KEYCLOAK_VERSION);
        return version == null || version.isBlank() ? null : version;
    }

    /**
     * The Keycloak version an upgrade test goes to from {@link #otherKeycloakVersion} ({@code offlinepreload.upgradeTo},
     * set by the execution of the minor it upgrades from), or null in the other executions.
     */
    public static String upgradeKeycloakVersion() {
        String version = System.getProperty("offlinepreload.upgradeTo");
        return version == null || version.isBlank() ? null : version;
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("System property " + name + " is not set: run the tests through Maven");
        }
        return value;
    }
}
