package dev.offlinepreload.keycloak;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.keycloak.models.KeycloakSession;

/**
 * Counts the Keycloak sessions at work that use the user-session provider: token refreshes, logins, logouts,
 * introspection, userinfo, the admin console's session pages, Keycloak's own session tasks. Those are the work a load
 * competes with; health probes and metrics scrapes do not ask for the provider, so they never hold a load back. A
 * session counts from the provider's creation (once per Keycloak session) until the session closes. The loader's
 * own threads (named {@value #OWN_THREADS}...) are not counted.
 */
public final class SessionRequests {

    static final String OWN_THREADS = "offline-preload-";

    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong begun = new AtomicLong();
    /** {@link #begun} at the previous {@link #busy()}; read and written by the governor's thread only. */
    private long seen;

    /** Called when a Keycloak session creates its user-session provider. */
    public void begin(KeycloakSession session) {
        if (Thread.currentThread().getName().startsWith(OWN_THREADS)) {
            return;
        }
        inFlight.incrementAndGet();
        begun.incrementAndGet();
        session.enlistForClose(inFlight::decrementAndGet);
    }

    /**
     * Sessions at work now, and at least 1 if one began since the previous call, however short it was: a sample every
     * 25 ms sees every request. Called from one thread (the governor's).
     */
    int busy() {
        long now = begun.get();
        boolean began = now != seen;
        seen = now;
        return Math.max(inFlight.get(), began ? 1 : 0);
    }
}
