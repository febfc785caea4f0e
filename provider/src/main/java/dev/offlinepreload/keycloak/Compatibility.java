package dev.offlinepreload.keycloak;

import java.util.List;

import org.keycloak.common.Version;

/**
 * Whether this jar can work on the Keycloak it runs on. Asked at build time by the factories' {@code isSupported}:
 * there this class links only {@link Version}, which every Keycloak has, and reaches Keycloak's internals only through
 * {@link BuiltInSessions}, inside a catch, so that asking cannot fail on any Keycloak.
 */
public final class Compatibility {

    /** The Keycloak minors this jar supports. A new minor is one adapter and one entry here. */
    static final List<String> SUPPORTED_MINORS = List.of("26.4", "26.5", "26.6", "26.7");

    private Compatibility() {
    }

    /**
     * @param builtInEnabled whether Keycloak's built-in user-sessions provider is enabled: this provider serves
     *                       every session through it
     * @return why this jar must stay out of the server, or null if it can go in
     */
    public static String whyNotSupported(boolean builtInEnabled) {
        return whyNotSupported(Version.VERSION, builtInEnabled);
    }

    static String whyNotSupported(String keycloakVersion, boolean builtInEnabled) {
        String minor = minor(keycloakVersion);
        if (!SUPPORTED_MINORS.contains(minor)) {
            return "this is Keycloak " + keycloakVersion + " and this jar supports Keycloak " + supportedRange()
                    + "; install the release of this provider that supports Keycloak " + minor
                    + " (README, Compatibility), or none";
        }
        if (!builtInEnabled) {
            return "Keycloak's built-in user-sessions provider is disabled (spi-user-sessions--infinispan--enabled=false), "
                    + "and this provider serves sessions through it";
        }
        try {
            String missing = BuiltInSessions.missingInternals();
            return missing == null ? null
                    : "Keycloak " + keycloakVersion + " lacks " + missing + ", which this jar needs";
        } catch (LinkageError | RuntimeException e) {
            return "this jar does not link against Keycloak " + keycloakVersion + " (" + e + ")";
        }
    }

    /**
     * Runtime: whether preloading has anything to do on this node. Asked only where {@link #whyNotSupported} let the
     * jar in, so Keycloak's internals are those this jar was built against.
     *
     * @param builtIn Keycloak's built-in user-sessions factory
     * @return why preloading does not apply here, or null if it does
     */
    public static String whyNotApplicable(Object builtIn) {
        return BuiltInSessions.whyNoSessionCaches(builtIn);
    }

    /** "26.7" of "26.7.4", "26.7.4-SNAPSHOT" or "26.7.4.redhat-00001". */
    static String minor(String version) {
        String[] parts = version.split("[.-]");
        return parts.length >= 2 ? parts[0] + "." + parts[1] : version;
    }

    /** "26.7.x", "26.5.x and 26.7.x", "26.5.x, 26.6.x and 26.7.x". */
    static String supportedRange() {
        List<String> minors = SUPPORTED_MINORS.stream().map(m -> m + ".x").toList();
        String last = minors.get(minors.size() - 1);
        return minors.size() == 1 ? last : String.join(", ", minors.subList(0, minors.size() - 1)) + " and " + last;
    }
}
