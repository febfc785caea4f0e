package dev.offlinepreload.keycloak;

import java.util.List;
import java.util.function.Consumer;

import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.load.BatchResult;
import dev.offlinepreload.load.ImportedSession;
import dev.offlinepreload.load.RevocationRecheck;
import dev.offlinepreload.load.SessionStore;
import dev.offlinepreload.plan.Candidate;
import jakarta.persistence.EntityManager;
import org.keycloak.common.util.MultiSiteUtils;
import org.keycloak.common.util.Time;
import org.keycloak.connections.infinispan.InfinispanConnectionProvider;
import org.keycloak.connections.jpa.JpaConnectionProvider;
import org.keycloak.models.KeycloakSession;
import org.keycloak.models.KeycloakSessionFactory;
import org.keycloak.models.utils.KeycloakModelUtils;

/**
 * The loader's access to Keycloak: the database through Keycloak's JPA entities and transactions, the caches through
 * Infinispan. Together with {@link BatchImport}, {@link OfflineCaches} and {@link SessionQueries} this package is the
 * only code that touches Keycloak internals.
 */
public final class KeycloakSessionStore implements SessionStore, RevocationRecheck.Evictor {

    /** Candidates are filtered by idle time with this margin; Keycloak's own rules decide at import. */
    private static final int IDLE_FILTER_MARGIN_SECONDS = 600;

    private final KeycloakSessionFactory factory;
    private final String providerId;
    private final boolean persistentSessions;
    private final OfflineCaches caches;
    private final String nodeName;

    private KeycloakSessionStore(KeycloakSessionFactory factory, String providerId, OfflineCaches caches, String nodeName) {
        this.factory = factory;
        this.providerId = providerId;
        this.persistentSessions = MultiSiteUtils.isPersistentSessionsEnabled();
        this.caches = caches;
        this.nodeName = nodeName;
    }

    /** Looks the caches up once; they live as long as the node. */
    public static KeycloakSessionStore open(KeycloakSessionFactory factory, String providerId) {
        return KeycloakModelUtils.runJobInTransactionWithResult(factory, session -> {
            InfinispanConnectionProvider infinispan = session.getProvider(InfinispanConnectionProvider.class);
            OfflineCaches caches = new OfflineCaches(
                    infinispan.getCache(InfinispanConnectionProvider.OFFLINE_USER_SESSION_CACHE_NAME),
                    infinispan.getCache(InfinispanConnectionProvider.OFFLINE_CLIENT_SESSION_CACHE_NAME));
            return new KeycloakSessionStore(factory, providerId, caches, infinispan.getNodeInfo().nodeName());
        });
    }

    public String nodeName() {
        return nodeName;
    }

    /** "persistent" (the default: sessions written to the database) or "volatile". */
    public String sessionMode() {
        return persistentSessions ? "persistent" : "volatile";
    }

    public TopologySnapshot topology() {
        return caches.topology();
    }

    public boolean isCached(String userSessionId) {
        return caches.isCached(userSessionId);
    }

    /** Max entries per node of offlineSessions / offlineClientSessions; negative = unbounded. */
    public long sessionsMaxCount() {
        return caches.sessionsMaxCount();
    }

    public long clientSessionsMaxCount() {
        return caches.clientSessionsMaxCount();
    }

    public long localSessions() {
        return caches.localSessions();
    }

    public long localClientSessions() {
        return caches.localClientSessions();
    }

    @Override
    public void forEachCandidate(Consumer<Candidate> sink) {
        record RealmWindow(String id, int oldest) {
        }
        int now = Time.currentTime();
        List<RealmWindow> realms = KeycloakModelUtils.runJobInTransactionWithResult(factory, session ->
                session.realms().getRealmsStream()
                        .map(r -> new RealmWindow(r.getId(), now - r.getOfflineSessionIdleTimeout() - IDLE_FILTER_MARGIN_SECONDS))
                        .toList());
        for (RealmWindow realm : realms) {
            KeycloakModelUtils.runJobInTransaction(factory, session -> {
                try (var rows = SessionQueries.candidates(em(session), realm.id(), realm.oldest()).getResultStream()) {
                    rows.forEach(row -> sink.accept(new Candidate((String) row[0], ((Number) row[1]).intValue())));
                }
            });
        }
    }

    @Override
    public BatchResult importBatch(List<String> ids) {
        return KeycloakModelUtils.runJobInTransactionWithResult(factory, session ->
                new BatchImport(session, caches, persistentSessions, providerId).run(ids));
    }

    @Override
    public int removeDeleted(List<ImportedSession> imported) {
        return KeycloakModelUtils.runJobInTransactionWithResult(factory, session -> {
            DeletedSessionSweep.Result sweep = DeletedSessionSweep.sweep(em(session), caches, imported, false);
            return sweep.sessionsRemoved() + sweep.clientSessionsRemoved();
        });
    }

    @Override
    public void evict(List<ImportedSession> sessions) {
        caches.evict(sessions);
    }

    private static EntityManager em(KeycloakSession session) {
        return session.getProvider(JpaConnectionProvider.class).getEntityManager();
    }
}
