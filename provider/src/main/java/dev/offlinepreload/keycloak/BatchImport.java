package dev.offlinepreload.keycloak;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.offlinepreload.keycloak.KeycloakMinor.EntryExpiry;
import dev.offlinepreload.keycloak.SessionQueries.ClientSessionRow;
import dev.offlinepreload.keycloak.SessionQueries.UserSessionRow;
import dev.offlinepreload.load.BatchResult;
import dev.offlinepreload.load.BatchResult.SkippedRow;
import dev.offlinepreload.load.ImportedSession;
import dev.offlinepreload.load.RowCheck;
import dev.offlinepreload.plan.Batch;
import jakarta.persistence.EntityManager;
import org.jboss.logging.Logger;
import org.keycloak.common.util.Time;
import org.keycloak.connections.jpa.JpaConnectionProvider;
import org.keycloak.models.ClientModel;
import org.keycloak.models.KeycloakSession;
import org.keycloak.models.RealmModel;
import org.keycloak.models.UserSessionProvider;
import org.keycloak.models.session.PersistentAuthenticatedClientSessionAdapter;
import org.keycloak.models.session.PersistentUserSessionAdapter;
import org.keycloak.models.sessions.infinispan.changes.ClientSessionPersistentChangelogBasedTransaction;
import org.keycloak.models.sessions.infinispan.changes.SessionEntityWrapper;
import org.keycloak.models.sessions.infinispan.entities.AuthenticatedClientSessionEntity;
import org.keycloak.models.sessions.infinispan.entities.EmbeddedClientSessionKey;
import org.keycloak.models.sessions.infinispan.entities.UserSessionEntity;
import org.keycloak.models.sessions.infinispan.util.SessionTimeouts;
import org.keycloak.storage.StorageId;

/**
 * One batch inside one Keycloak transaction: read the batch's rows (one range scan per table, or by id), parse their
 * DATA (one parser per table for the whole batch, {@link SessionData}), drop what is not the batch's or cannot be
 * loaded, put the rest into this node's caches if absent, then take out again whatever a logout or revocation removed
 * from the caches while the batch ran, or shortly before ({@link RemovalWatch}). Rows deleted without going through
 * the caches are caught by the delayed existence check ({@code RevocationGuard}).
 * <p>
 * With persistent user sessions (Keycloak's default) the cache entries are built and put here, per session, exactly
 * as {@code PersistentUserSessionProvider.importUserSession} builds them for a lazy load (Keycloak's own entity
 * factories, its {@code SessionTimeouts} lifespans, put-if-absent with the effective lifespan), but as one local,
 * owner-only write per entry rather than through Keycloak's per-request transaction. A cached session that lacks
 * some client sessions gets exactly the missing ones. In volatile mode each session goes through Keycloak's own
 * import, which computes that mode's cache lifespans.
 */
final class BatchImport {

    private static final Logger log = Logger.getLogger(BatchImport.class);

    private final KeycloakSession session;
    private final EntityManager em;
    private final SessionQueries queries;
    private final OfflineCaches caches;
    private final RemovalWatch removals;
    private final boolean persistentSessions;
    private final String providerId;
    private final KeycloakMinor minor;
    private final Map<String, RealmModel> realms = new HashMap<>();
    /** Clients by realm id, then client id: looked up per client session row without building a combined key. */
    private final Map<String, Map<String, ClientModel>> clients = new HashMap<>();

    private final List<ImportedSession> imported = new ArrayList<>();
    private final List<SkippedRow> skipped = new ArrayList<>();
    private long alreadyCached;
    private long repaired;
    private long expired;
    private long gone;
    private long revoked;

    BatchImport(KeycloakSession session, SessionQueries queries, OfflineCaches caches, RemovalWatch removals,
                boolean persistentSessions, String providerId, KeycloakMinor minor) {
        this.session = session;
        this.em = session.getProvider(JpaConnectionProvider.class).getEntityManager();
        this.queries = queries;
        this.caches = caches;
        this.removals = removals;
        this.persistentSessions = persistentSessions;
        this.providerId = providerId;
        this.minor = minor;
    }

    BatchResult run(Batch batch) {
        long mark = removals.mark();
        long readStart = System.nanoTime();
        try {
            Set<String> wanted = new HashSet<>(batch.ids());
            List<UserSessionRow> rows = queries.userSessions(em, batch, wanted::contains);
            if (rows.size() < batch.size()) {
                Set<String> read = rows.stream().map(r -> r.entity().userSessionId()).collect(Collectors.toSet());
                gone += batch.ids().stream().filter(id -> !read.contains(id) && caches.countsSession(id)).count();
            }
            SessionData.parseUserSessions(rows.stream().map(UserSessionRow::data).toList());
            List<ClientSessionRow> allClientRows = queries.clientSessions(em, batch, wanted::contains);
            SessionData.parseClientSessions(allClientRows.stream().map(ClientSessionRow::data).toList());
            Map<String, List<ClientSessionRow>> clientRows = new HashMap<>(rows.size() * 2);
            for (ClientSessionRow row : allClientRows) {
                clientRows.computeIfAbsent(row.entity().getUserSessionId(), id -> new ArrayList<>(2)).add(row);
            }
            int now = Time.currentTime();
            UserSessionProvider provider = persistentSessions ? null : session.getProvider(UserSessionProvider.class, providerId);
            for (UserSessionRow row : rows) {
                load(row, clientRows.getOrDefault(row.entity().userSessionId(), List.of()), now, provider);
            }
            takeOutRemovedSince(mark, readStart);
        } finally {
            removals.release(mark);
        }
        long clientSessions = imported.stream().mapToLong(s -> s.clientIds().size()).sum();
        long readForOthers = caches.clientSessionsGrouped() ? 0 : batch.ids().stream().filter(id -> !caches.countsSession(id)).count();
        return new BatchResult(List.copyOf(imported), clientSessions, alreadyCached, repaired, expired, gone, List.copyOf(skipped), revoked,
                readForOthers);
    }

    private void load(UserSessionRow userSessionRow, List<ClientSessionRow> clientRows, int now, UserSessionProvider provider) {
        ReadOnlyUserSession row = userSessionRow.entity();
        String id = row.userSessionId();
        String problem = RowCheck.timestampProblem(row.createOn(), row.lastSessionRefresh(), now);
        RealmModel realm = problem == null ? realm(row.realmId()) : null;
        if (problem == null && realm == null) {
            problem = "realm " + row.realmId() + " does not exist";
        }
        if (problem == null && isLocalUser(row.userId()) && !userSessionRow.localUserExists()) {
            problem = "user " + row.userId() + " does not exist";
        }
        if (problem != null) {
            skip(id, problem);
            return;
        }
        PersistentUserSessionAdapter model = new PersistentUserSessionAdapter(session, row, realm, row.userId(), new HashMap<>());
        // Persistent mode needs no look first: its put is put-if-absent and hands back what a request cached first
        // (a second lookup per session cost about 5% of the loader's CPU). Keycloak's own import, in volatile mode,
        // does not say, so there the cache is asked first.
        if (!persistentSessions && caches.session(id) != null) {
            alreadyCached++; // a request loaded it first; its state is at least as new
            return;
        }
        try {
            userSessionRow.data().parseInto(model); // parsed now, so a corrupt row never reaches the cache
        } catch (IOException | RuntimeException e) {
            skip(id, "DATA is not valid session JSON (" + e.getMessage() + ")");
            return;
        }
        if (persistentSessions) {
            importSession(model, realm, clientRows);
        } else {
            importThroughKeycloak(provider, model, realm, clientRows);
        }
    }

    /** Persistent mode: the user session entry, then each client session entry, put-if-absent. */
    private void importSession(PersistentUserSessionAdapter model, RealmModel realm,
                               List<ClientSessionRow> clientRows) {
        UserSessionEntity entity = UserSessionEntity.createFromModel(model);
        entity.setOffline(true);
        long lifespan = SessionTimeouts.getOfflineSessionLifespanMs(realm, null, entity);
        long maxIdle = SessionTimeouts.getOfflineSessionMaxIdleMs(realm, null, entity);
        if (lifespan == SessionTimeouts.ENTRY_EXPIRED_FLAG || maxIdle == SessionTimeouts.ENTRY_EXPIRED_FLAG) {
            if (caches.countsSession(entity.getId())) {
                expired++;
            }
            return;
        }
        List<ClientSessionEntry> entries = clientEntries(entity, model, realm, clientRows, null);
        entries.forEach(e -> entity.getClientSessions().add(e.client().getId()));
        ContainerWriter.Result<SessionEntityWrapper<UserSessionEntity>> stored = caches.putIfAbsent(entity.getId(),
                OfflineCaches.wrap(entity), minor.expiry(lifespan, maxIdle));
        if (stored.outcome() == ContainerWriter.Outcome.NOT_OWNED && caches.clientSessionsGrouped()) {
            return; // the topology changed since planning: the pass stops and plans again
        }
        if (stored.outcome() == ContainerWriter.Outcome.PRESENT) {
            alreadyCached++; // a request loaded it first; its state is at least as new
            completeClientSessions(stored.present().getEntity(), model, realm, clientRows);
            return;
        }
        // Put, or (client sessions with owners of their own) another node's entry: the client sessions whose keys are
        // this node's. ContainerWriter refuses every other key, so each key is written only by its owner, the node
        // that sees its removals.
        boolean entryHere = stored.outcome() == ContainerWriter.Outcome.PUT;
        List<String> put = new ArrayList<>(entries.size());
        for (ClientSessionEntry e : entries) {
            if (caches.putIfAbsent(new EmbeddedClientSessionKey(entity.getId(), e.client().getId()), OfflineCaches.wrap(e.entity()),
                    e.expiry())) {
                put.add(e.client().getId());
            }
        }
        if (entryHere || !put.isEmpty()) {
            imported.add(new ImportedSession(entity.getId(), List.copyOf(put), entryHere));
        }
    }

    /** A cached session whose entry lists client sessions the cache no longer holds: put exactly the missing ones. */
    private void completeClientSessions(UserSessionEntity cached, PersistentUserSessionAdapter model, RealmModel realm,
                                        List<ClientSessionRow> clientRows) {
        List<String> put = new ArrayList<>();
        for (ClientSessionEntry e : clientEntries(cached, model, realm, clientRows, cached.getClientSessions())) {
            String clientId = e.client().getId();
            if (!caches.hasClientSession(cached.getId(), clientId)
                    && caches.putIfAbsent(new EmbeddedClientSessionKey(cached.getId(), clientId), OfflineCaches.wrap(e.entity()),
                    e.expiry())) {
                put.add(clientId);
            }
        }
        if (!put.isEmpty()) {
            repaired++;
            imported.add(new ImportedSession(cached.getId(), List.copyOf(put)));
        }
    }

    private record ClientSessionEntry(ClientModel client, AuthenticatedClientSessionEntity entity, EntryExpiry expiry) {
    }

    /**
     * The client sessions to cache for a user session: those of existing clients with valid DATA that have not
     * expired, built as Keycloak builds them (timestamp = the user session's last refresh).
     *
     * @param only client ids to consider (those a cached entry lists), or null for all
     */
    private List<ClientSessionEntry> clientEntries(UserSessionEntity userSession, PersistentUserSessionAdapter model,
                                                   RealmModel realm, List<ClientSessionRow> clientRows,
                                                   Set<String> only) {
        List<ClientSessionEntry> entries = new ArrayList<>(clientRows.size());
        for (ClientSessionRow clientRow : clientRows) {
            ClientModel client = client(realm, clientRow.entity().getClientId());
            if (client == null || only != null && !only.contains(client.getId())) {
                continue; // client deleted: Keycloak's own loading drops such client sessions the same way
            }
            var clientSession = new PersistentAuthenticatedClientSessionAdapter(session, clientRow.entity(), realm, client, model);
            AuthenticatedClientSessionEntity entity;
            try {
                clientRow.data().parseInto(clientSession);
                entity = ClientSessionPersistentChangelogBasedTransaction.createAuthenticatedClientSessionInstance(
                        userSession.getId(), userSession.getUser(), clientSession, realm.getId(), client.getId(), true);
            } catch (IOException | RuntimeException e) {
                skip(userSession.getId(), "client session " + clientRow.entity().getClientId()
                        + " has invalid DATA (" + e.getMessage() + ")");
                continue;
            }
            entity.setTimestamp(userSession.getLastSessionRefresh());
            long lifespan = SessionTimeouts.getOfflineClientSessionLifespanMs(realm, client, entity);
            long maxIdle = SessionTimeouts.getOfflineClientSessionMaxIdleMs(realm, client, entity);
            if (lifespan != SessionTimeouts.ENTRY_EXPIRED_FLAG && maxIdle != SessionTimeouts.ENTRY_EXPIRED_FLAG) {
                entries.add(new ClientSessionEntry(client, entity, minor.expiry(lifespan, maxIdle)));
            }
        }
        return entries;
    }

    /** Volatile mode: Keycloak's own single-session import (put-if-absent with that mode's lifespan and max-idle). */
    private void importThroughKeycloak(UserSessionProvider provider, PersistentUserSessionAdapter model, RealmModel realm,
                                       List<ClientSessionRow> clientRows) {
        List<String> clientIds = new ArrayList<>();
        for (ClientSessionRow clientRow : clientRows) {
            ClientModel client = client(realm, clientRow.entity().getClientId());
            if (client == null) {
                continue;
            }
            var clientSession = new PersistentAuthenticatedClientSessionAdapter(session, clientRow.entity(), realm, client, model);
            try {
                clientRow.data().parseInto(clientSession);
            } catch (IOException | RuntimeException e) {
                skip(model.getId(), "client session " + clientRow.entity().getClientId() + " has invalid DATA ("
                        + e.getMessage() + ")");
                continue;
            }
            model.getAuthenticatedClientSessions().put(client.getId(), clientSession);
            clientIds.add(client.getId());
        }
        provider.importUserSessions(List.of(model), true);
        if (caches.session(model.getId()) != null) {
            imported.add(new ImportedSession(model.getId(), List.copyOf(clientIds)));
        } else {
            expired++;
        }
    }

    /** A row not loaded, counted (and so logged) by the node that counts its session ({@link OfflineCaches#countsSession}). */
    private void skip(String userSessionId, String reason) {
        if (caches.countsSession(userSessionId)) {
            skipped.add(new SkippedRow(userSessionId, reason));
        }
    }

    /**
     * Takes out what this batch put, when the batch failed after putting (also in its transaction's commit): the
     * retry puts it again, and is then the one whose sessions get the delayed revocation check.
     */
    void evictImported() {
        caches.evict(imported);
    }

    /**
     * Sessions this batch put whose cache entry a logout or revocation removed after the mark: while the batch read,
     * or up to {@link RemovalWatch#LOOK_BACK} before, while the removal's database delete may not have committed yet;
     * and those the cache evicted while the batch read (the row read may be older than the evicted entry).
     */
    private void takeOutRemovedSince(long mark, long readStart) {
        if (!removals.anyRemovedSince(mark)) {
            return;
        }
        List<ImportedSession> kept = new ArrayList<>(imported.size());
        List<ImportedSession> revokedSessions = new ArrayList<>();
        List<ImportedSession> evictedSessions = new ArrayList<>();
        for (ImportedSession s : imported) {
            if (removals.removedSince(s.id(), mark)) {
                long ms = (readStart - removals.removedAtNanos(s.id())) / 1_000_000;
                if (removals.evicted(s.id())) {
                    evictedSessions.add(s);
                    log.debugf("Offline session preload: took session %s out of the cache again: the cache evicted it "
                            + "%d ms %s this batch began reading, so the row read may be older than what it held", s.id(),
                            Math.abs(ms), ms >= 0 ? "before" : "after");
                } else {
                    revokedSessions.add(s);
                    log.debugf("Offline session preload: took session %s out of the cache again: a logout or revocation "
                            + "removed it %d ms %s this batch began reading", s.id(), Math.abs(ms), ms >= 0 ? "before" : "after");
                }
                continue;
            }
            List<String> clientIds = new ArrayList<>(s.clientIds().size());
            for (String clientId : s.clientIds()) {
                EmbeddedClientSessionKey key = new EmbeddedClientSessionKey(s.id(), clientId);
                if (removals.removedSince(key, mark)) {
                    caches.evictClientSession(s.id(), clientId);
                    if (!removals.evicted(key)) {
                        revoked++;
                    }
                } else {
                    clientIds.add(clientId);
                }
            }
            kept.add(clientIds.size() == s.clientIds().size() ? s : new ImportedSession(s.id(), List.copyOf(clientIds), s.entryHere()));
        }
        caches.evict(revokedSessions);
        caches.evict(evictedSessions);
        gone += revokedSessions.size() + evictedSessions.size();
        revoked += revokedSessions.size();
        imported.clear();
        imported.addAll(kept);
    }

    private RealmModel realm(String realmId) {
        return realms.computeIfAbsent(realmId, id -> session.realms().getRealm(id));
    }

    private ClientModel client(RealmModel realm, String clientId) {
        return clients.computeIfAbsent(realm.getId(), id -> new HashMap<>()).computeIfAbsent(clientId, realm::getClientById);
    }

    static boolean isLocalUser(String userId) {
        return userId != null && StorageId.isLocalStorage(userId);
    }
}
