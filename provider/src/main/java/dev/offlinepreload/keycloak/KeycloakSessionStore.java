package dev.offlinepreload.keycloak;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.offlinepreload.cluster.ClusterStart;
import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.load.BatchResult;
import dev.offlinepreload.load.ImportedSession;
import dev.offlinepreload.load.RequestWatch;
import dev.offlinepreload.load.SessionCount;
import dev.offlinepreload.load.SessionStore;
import dev.offlinepreload.plan.Batch;
import dev.offlinepreload.plan.Candidate;
import jakarta.persistence.EntityManager;
import org.hibernate.Session;
import org.keycloak.common.util.MultiSiteUtils;
import org.keycloak.common.util.Time;
import org.keycloak.connections.infinispan.InfinispanConnectionProvider;
import org.keycloak.connections.jpa.JpaConnectionProvider;
import org.keycloak.connections.jpa.JpaConnectionProviderFactory;
import org.keycloak.models.KeycloakSession;
import org.keycloak.models.KeycloakSessionFactory;
import org.keycloak.models.utils.KeycloakModelUtils;

/**
 * The loader's access to Keycloak: the database through Keycloak's transactions and its connection, the caches through
 * Infinispan. Together with {@link BatchImport}, {@link OfflineCaches}, {@link ContainerWriter}, {@link RemovalWatch},
 * {@link SessionQueries}, {@link SessionData} and {@link DeletedSessionSweep} this package is the only code that
 * touches Keycloak internals.
 */
public final class KeycloakSessionStore implements SessionStore, AutoCloseable {

    /** Candidates are filtered by idle time with this margin; Keycloak's own rules decide at import. */
    private static final int IDLE_FILTER_MARGIN_SECONDS = 600;

    private final KeycloakSessionFactory factory;
    private final String providerId;
    private final boolean persistentSessions;
    private final OfflineCaches caches;
    private final SessionQueries queries;
    private final RemovalWatch removals = new RemovalWatch();
    private final StartedNodes started;
    private final String nodeName;

    private KeycloakSessionStore(KeycloakSessionFactory factory, String providerId, OfflineCaches caches, StartedNodes started,
                                 SessionQueries queries, String nodeName) {
        this.factory = factory;
        this.providerId = providerId;
        this.persistentSessions = persistentSessions();
        this.caches = caches;
        this.started = started;
        this.queries = queries;
        this.nodeName = nodeName;
        caches.sessionsCache().addListener(removals);
        caches.clientSessionsCache().addListener(removals);
    }

    /** Whether this Keycloak keeps its sessions in the database (persistent-user-sessions, the default since 26.2). */
    public static boolean persistentSessions() {
        return MultiSiteUtils.isPersistentSessionsEnabled();
    }

    /**
     * Looks the caches up once; they live as long as the node.
     *
     * @param statementTimeout longest one loader statement may take or wait for the database
     */
    public static KeycloakSessionStore open(KeycloakSessionFactory factory, String providerId, Duration statementTimeout) {
        return KeycloakModelUtils.runJobInTransactionWithResult(factory, session -> {
            InfinispanConnectionProvider infinispan = session.getProvider(InfinispanConnectionProvider.class);
            OfflineCaches caches = OfflineCaches.of(
                    infinispan.getCache(InfinispanConnectionProvider.OFFLINE_USER_SESSION_CACHE_NAME),
                    infinispan.getCache(InfinispanConnectionProvider.OFFLINE_CLIENT_SESSION_CACHE_NAME),
                    MultiSiteUtils.isPersistentSessionsEnabled());
            String schema = factory.getProviderFactory(JpaConnectionProvider.class) instanceof JpaConnectionProviderFactory jpa
                    ? jpa.getSchema() : null;
            SessionQueries queries = em(session).unwrap(Session.class).doReturningWork(c -> new SessionQueries(schema,
                    "PostgreSQL".equals(c.getMetaData().getDatabaseProductName()), statementTimeout, c.getMetaData().getDriverName(),
                    KeycloakMinor.RUNNING));
            return new KeycloakSessionStore(factory, providerId, caches,
                    new StartedNodes(infinispan.getCache(InfinispanConnectionProvider.WORK_CACHE_NAME)), queries,
                    KeycloakMinor.RUNNING.nodeName(infinispan));
        });
    }

    @Override
    public String nodeName() {
        return nodeName;
    }

    @Override
    public String sessionMode() {
        return persistentSessions ? "persistent" : "volatile";
    }

    @Override
    public RequestWatch newRequestWatch() {
        return new RequestsAtWork();
    }

    /** Tells the cluster that Keycloak has started on this node ({@link StartedNodes}). */
    public void announceStarted() {
        started.announce(nodeName);
    }

    @Override
    public ClusterStart clusterStart(int expectedMembers) {
        List<String> clustered = caches.members();
        // Without a cluster this node is the one member, by the name it puts its marker under.
        List<String> members = clustered.isEmpty() ? List.of(nodeName) : clustered;
        if (members.size() < expectedMembers) {
            return ClusterStart.FORMING;
        }
        return started.allStarted(members, members) ? ClusterStart.STARTED : ClusterStart.JOINED;
    }

    @Override
    public TopologySnapshot topology() {
        return caches.topology();
    }

    @Override
    public long topologyId() {
        return caches.topologyId();
    }

    @Override
    public boolean isCached(String userSessionId) {
        return caches.isCached(userSessionId);
    }

    /**
     * The client sessions the pass put for it and those its cached entry lists (what the database held when it was
     * loaded; a client session found cached at load time and cleared since is not among those put) that this node's
     * cache does not hold.
     */
    @Override
    public int missingClientSessions(ImportedSession session) {
        Set<String> expected = new HashSet<>(session.clientIds());
        var entry = caches.session(session.id());
        if (entry != null) {
            expected.addAll(entry.getEntity().getClientSessions());
        }
        return (int) expected.stream().filter(clientId -> caches.ownsClientSession(session.id(), clientId)
                && !caches.hasClientSession(session.id(), clientId)).count();
    }

    @Override
    public RemovalWindow watchRemovals() {
        long mark = removals.mark();
        return new RemovalWindow() {
            @Override
            public boolean removed(String userSessionId) {
                return removals.sessionTouchedSince(userSessionId, mark);
            }

            @Override
            public void close() {
                removals.release(mark);
            }
        };
    }

    @Override
    public long sessionsMaxCount() {
        return caches.sessionsMaxCount();
    }

    @Override
    public long clientSessionsMaxCount() {
        return caches.clientSessionsMaxCount();
    }

    @Override
    public long localClientSessions() {
        return caches.localClientSessions();
    }

    @Override
    public void forEachKey(Consumer<String> sink) {
        KeycloakModelUtils.runJobInTransaction(factory, session -> {
            queries.keys(em(session), sink);
        });
    }

    /** One stream over all realms, in key order; each realm's idle window is applied to the rows as they come. */
    @Override
    public void forEachCandidate(Consumer<Candidate> sink) {
        Map<String, Integer> oldestByRealm = oldestRefreshByRealm(IDLE_FILTER_MARGIN_SECONDS);
        int oldest = oldestByRealm.values().stream().min(Integer::compare).orElse(Time.currentTime());
        KeycloakModelUtils.runJobInTransaction(factory, session -> {
            queries.candidates(em(session), oldest, row -> {
                Integer realmOldest = oldestByRealm.get((String) row[2]);
                int lastRefresh = (Integer) row[1];
                if (realmOldest != null && lastRefresh >= realmOldest) {
                    sink.accept(new Candidate((String) row[0], lastRefresh));
                }
            });
        });
    }

    /** Realm by realm, each from the later of the window's start and its idle timeout's cut-off. */
    @Override
    public void forEachRecent(Duration window, Consumer<Candidate> sink) {
        int windowStart = Time.currentTime() - (int) Math.min(Integer.MAX_VALUE, window.toSeconds());
        Map<String, Integer> oldestByRealm = oldestRefreshByRealm(0);
        KeycloakModelUtils.runJobInTransaction(factory, session -> oldestByRealm.forEach((realm, oldest) ->
                queries.recent(em(session), realm, Math.max(windowStart, oldest),
                        row -> sink.accept(new Candidate((String) row[0], (Integer) row[1])))));
    }

    /**
     * Without the margin of the candidates: the count says what the realms' idle timeouts keep valid now. Aggregates
     * for all realms together (one per realm cost a join of both tables each: 3.2 s of PostgreSQL time per pass at 1M
     * sessions in 4 realms), the client sessions without a join of both tables whole; nothing is read into memory.
     */
    @Override
    public SessionCount countSessions() {
        Map<String, Integer> oldestByRealm = oldestRefreshByRealm(0);
        return KeycloakModelUtils.runJobInTransactionWithResult(factory, session -> new SessionCount(
                queries.countSessions(em(session), oldestByRealm), queries.countClientSessions(em(session), oldestByRealm)));
    }

    /**
     * Per realm id, the oldest last refresh of an offline session that has not expired by its idle timeout, less a
     * margin. Read with the loader's own bounded statement: Keycloak's realm list is not cached and its query has no
     * timeout, which held a loader thread for as long as a paused database hung.
     */
    private Map<String, Integer> oldestRefreshByRealm(int marginSeconds) {
        int now = Time.currentTime();
        Map<String, Integer> idleTimeouts = KeycloakModelUtils.runJobInTransactionWithResult(factory,
                session -> queries.realmIdleTimeouts(em(session)));
        Map<String, Integer> oldest = new HashMap<>();
        idleTimeouts.forEach((realm, idle) -> oldest.put(realm, now - idle - marginSeconds));
        return oldest;
    }

    /**
     * One batch in one Keycloak transaction. If it fails after putting sessions (while reading, importing, or
     * committing), what it put is taken out again: otherwise the retry would find those sessions cached, count them
     * as already cached, and leave them out of the delayed revocation check.
     */
    @Override
    public BatchResult importBatch(Batch batch) {
        AtomicReference<BatchImport> attempt = new AtomicReference<>();
        try {
            return KeycloakModelUtils.runJobInTransactionWithResult(factory, session -> {
                attempt.set(new BatchImport(session, queries, caches, removals, persistentSessions, providerId,
                        KeycloakMinor.RUNNING));
                return attempt.get().run(batch);
            });
        } catch (RuntimeException e) {
            if (attempt.get() != null) {
                attempt.get().evictImported();
            }
            throw e;
        }
    }

    @Override
    public int removeDeleted(Batch batch, List<ImportedSession> imported) {
        return KeycloakModelUtils.runJobInTransactionWithResult(factory, session ->
                DeletedSessionSweep.sweep(em(session), queries, caches, batch, imported));
    }

    @Override
    public void evict(List<ImportedSession> sessions) {
        caches.evict(sessions);
    }

    /**
     * Why preloading does not apply to these caches, or null if it does: with volatile sessions the loader imports
     * through Keycloak's own import, which puts a client session whose key has an owner of its own on that owner,
     * another node than the one loading, beyond its removal watch and eviction (a revocation during the load could
     * leave it cached).
     */
    public String whyNotApplicable() {
        if (!caches.clientSessionsGrouped() && !persistentSessions) {
            return "with volatile sessions and offlineClientSessions placing a client session by its own key (no "
                    + "ClientSessionKeyGrouper: Keycloak 26.4 has none; on 26.5+ a cache configuration file replaced "
                    + "Keycloak's) this provider could not take a client session out again that a revocation removes during "
                    + "a load; persistent sessions (Keycloak's default) are loaded";
        }
        return null;
    }

    /**
     * Whether a client session lives with its user session here; if not (Keycloak 26.4, or a cache configuration
     * without Keycloak's grouper), every node reads every session and keeps the keys it owns.
     */
    public boolean clientSessionsGrouped() {
        return caches.clientSessionsGrouped();
    }

    @Override
    public void close() {
        caches.sessionsCache().removeListener(removals);
        caches.clientSessionsCache().removeListener(removals);
    }

    private static EntityManager em(KeycloakSession session) {
        return session.getProvider(JpaConnectionProvider.class).getEntityManager();
    }
}
