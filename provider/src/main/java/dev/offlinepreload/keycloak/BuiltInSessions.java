package dev.offlinepreload.keycloak;

import java.util.List;

import org.keycloak.infinispan.util.InfinispanUtils;
import org.keycloak.models.sessions.infinispan.InfinispanUserSessionProviderFactory;

/** What this jar needs of Keycloak's built-in session provider, kept apart so that only asking for it links it. */
final class BuiltInSessions {

    /** The Keycloak classes this jar's adapter uses; a Keycloak without one of them gets the stock server. */
    private static final List<String> NEEDED = List.of(
            "org.keycloak.models.sessions.infinispan.InfinispanUserSessionProviderFactory",
            "org.keycloak.models.sessions.infinispan.PersistentUserSessionProvider",
            "org.keycloak.models.sessions.infinispan.entities.UserSessionEntity",
            "org.keycloak.models.sessions.infinispan.entities.AuthenticatedClientSessionEntity",
            "org.keycloak.connections.infinispan.InfinispanConnectionProvider",
            "org.keycloak.models.jpa.session.PersistentUserSessionEntity",
            "org.keycloak.models.jpa.session.PersistentClientSessionEntity");

    private BuiltInSessions() {
    }

    /** The first needed class this Keycloak does not have, or null. */
    static String missingInternals() {
        for (String name : NEEDED) {
            try {
                Class.forName(name, false, BuiltInSessions.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                return "the class " + name;
            }
        }
        return null;
    }

    static String whyNoSessionCaches(Object builtIn) {
        if (!InfinispanUtils.isEmbeddedInfinispan()) {
            return "sessions live in an external Infinispan (multi-site or clusterless setup), not in this node's caches";
        }
        // useCaches() exists only from 26.7 on; the operational info has carried the effective value since 26.4
        if (!(builtIn instanceof InfinispanUserSessionProviderFactory factory)
                || !Boolean.parseBoolean(factory.getOperationalInfo().get(InfinispanUserSessionProviderFactory.CONFIG_USE_CACHES))) {
            return "Keycloak keeps no session caches here (stateless setup or use-caches=false)";
        }
        return null;
    }
}
