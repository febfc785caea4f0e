package dev.offlinepreload.keycloak;

import liquibase.changelog.ChangeLogHistoryService;
import org.keycloak.common.Version;
import org.keycloak.connections.infinispan.InfinispanConnectionProvider;
import org.keycloak.models.sessions.infinispan.util.SessionTimeouts;

/**
 * What differs between the Keycloak minors this jar supports, as far as the adapter sees it: decided once from the
 * running Keycloak's version, and asked only inside this package. Each method names the minor that brought the
 * difference (docs/keycloak-minors.md); the code that depends on it calls Keycloak's newer member only where this
 * says it exists, so the jar, compiled against the newest supported minor, links on the older ones. Public for the
 * other adapter package, {@code schema}.
 */
public record KeycloakMinor(int major, int minor) {

    public static final KeycloakMinor RUNNING = of(Version.VERSION);

    /** Keycloak's Liquibase history service before 26.5 (re-registered after each of its runs, as Keycloak does). */
    static final String CHANGELOG_HISTORY_BEFORE_26_5 = "org.keycloak.connections.jpa.updater.liquibase.conn.CustomChangeLogHistoryService";
    /** The same from 26.5. */
    static final String CHANGELOG_HISTORY = "org.keycloak.connections.jpa.updater.liquibase.conn.MySQLCustomChangeLogHistoryService";

    /** "26.5" of "26.5.6", "26.5.6-SNAPSHOT" or "26.5.6.redhat-00001"; unparseable versions count as the newest. */
    static KeycloakMinor of(String version) {
        String[] parts = Compatibility.minor(version).split("\\.");
        try {
            return new KeycloakMinor(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
        } catch (RuntimeException e) {
            return new KeycloakMinor(Integer.MAX_VALUE, 0);
        }
    }

    private boolean atLeast(int wantedMajor, int wantedMinor) {
        return major > wantedMajor || major == wantedMajor && minor >= wantedMinor;
    }

    /** This node's name in the cluster: {@code getNodeInfo()} from 26.5, before that the topology info's. */
    @SuppressWarnings("deprecation") // getTopologyInfo(): deprecated for removal from 26.5, used only before it
    public String nodeName(InfinispanConnectionProvider infinispan) {
        return atLeast(26, 5) ? infinispan.getNodeInfo().nodeName() : infinispan.getTopologyInfo().getMyNodeName();
    }

    /** The Liquibase history service Keycloak registers again after each of its runs on this minor. */
    public ChangeLogHistoryService changeLogHistoryService() {
        String name = atLeast(26, 5) ? CHANGELOG_HISTORY : CHANGELOG_HISTORY_BEFORE_26_5;
        try {
            return (ChangeLogHistoryService) Class.forName(name, true, KeycloakMinor.class.getClassLoader())
                    .getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(name + " is not there: this jar does not match Keycloak " + this, e);
        }
    }

    /**
     * 26.5: OFFLINE_USER_SESSION.REMEMBER_ME, and the expiration queries the changelog's indexes serve (26.4 has one
     * delete per realm, on its own index of the first one's columns).
     */
    public boolean hasRememberMeColumn() {
        return atLeast(26, 5);
    }

    /**
     * The expiry of a persistent-mode cache entry as Keycloak's own import writes it on this minor: from 26.6 one
     * lifespan, the earlier of the two ({@code SessionTimeouts.calculateEffectiveSessionLifespan}), and no max-idle;
     * before, both.
     */
    EntryExpiry expiry(long lifespanMs, long maxIdleMs) {
        return atLeast(26, 6)
                ? new EntryExpiry(SessionTimeouts.calculateEffectiveSessionLifespan(maxIdleMs, lifespanMs), EntryExpiry.NONE)
                : new EntryExpiry(lifespanMs, maxIdleMs);
    }

    /** A cache entry's lifespan and max-idle in milliseconds, {@value #NONE} for none, as Infinispan's metadata takes them. */
    record EntryExpiry(long lifespanMs, long maxIdleMs) {
        static final long NONE = -1;
    }

    @Override
    public String toString() {
        return major + "." + minor;
    }
}
