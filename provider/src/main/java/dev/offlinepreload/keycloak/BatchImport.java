package dev.offlinepreload.keycloak;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.offlinepreload.load.BatchResult;
import dev.offlinepreload.load.BatchResult.SkippedRow;
import dev.offlinepreload.load.ImportedSession;
import dev.offlinepreload.load.RowCheck;
import jakarta.persistence.EntityManager;
import org.keycloak.common.util.Time;
import org.keycloak.connections.jpa.JpaConnectionProvider;
import org.keycloak.models.ClientModel;
import org.keycloak.models.KeycloakSession;
import org.keycloak.models.RealmModel;
import org.keycloak.models.UserSessionProvider;
import org.keycloak.models.jpa.session.ImmutablePersistentClientSessionEntity;
import org.keycloak.models.jpa.session.ImmutablePersistentUserSessionEntity;
import org.keycloak.models.session.PersistentAuthenticatedClientSessionAdapter;
import org.keycloak.models.session.PersistentUserSessionAdapter;
import org.keycloak.models.sessions.infinispan.PersistentUserSessionProvider;
import org.keycloak.storage.StorageId;

/**
 * One batch inside one Keycloak transaction: read the rows, drop what cannot be loaded, import the rest the way
 * Keycloak imports a lazily loaded session (put-if-absent, Keycloak's own lifespans), then re-read which still exist
 * with a shared lock and take out again whatever was deleted meanwhile.
 */
final class BatchImport {

    private final KeycloakSession session;
    private final EntityManager em;
    private final OfflineCaches caches;
    private final boolean persistentSessions;
    private final String providerId;

    private final List<ImportedSession> imported = new ArrayList<>();
    private final List<SkippedRow> skipped = new ArrayList<>();
    private long clientSessions;
    private long alreadyCached;
    private long expired;
    private long gone;

    BatchImport(KeycloakSession session, OfflineCaches caches, boolean persistentSessions, String providerId) {
        this.session = session;
        this.em = session.getProvider(JpaConnectionProvider.class).getEntityManager();
        this.caches = caches;
        this.persistentSessions = persistentSessions;
        this.providerId = providerId;
    }

    BatchResult run(List<String> ids) {
        try {
            List<ImmutablePersistentUserSessionEntity> rows = SessionQueries.userSessions(em, ids);
            gone += ids.size() - rows.size();
            Map<String, List<ImmutablePersistentClientSessionEntity>> clientRows = SessionQueries.clientSessions(em, ids)
                    .stream().collect(Collectors.groupingBy(ImmutablePersistentClientSessionEntity::getUserSessionId));
            Set<String> localUsers = SessionQueries.existingLocalUsers(em, rows.stream()
                    .map(ImmutablePersistentUserSessionEntity::userId).filter(BatchImport::isLocalUser).collect(Collectors.toSet()));
            int now = Time.currentTime();
            UserSessionProvider provider = session.getProvider(UserSessionProvider.class, providerId);
            for (ImmutablePersistentUserSessionEntity row : rows) {
                load(row, clientRows.getOrDefault(row.userSessionId(), List.of()), localUsers, now, provider);
            }
            removeDeletedMeanwhile();
        } catch (RuntimeException e) {
            // Nothing that was put but not checked may stay: evict it, the retry puts it again.
            caches.evict(imported);
            throw e;
        }
        return new BatchResult(List.copyOf(imported), clientSessions, alreadyCached, expired, gone, List.copyOf(skipped));
    }

    private void load(ImmutablePersistentUserSessionEntity row, List<ImmutablePersistentClientSessionEntity> clientRows,
                      Set<String> localUsers, int now, UserSessionProvider provider) {
        String id = row.userSessionId();
        String problem = RowCheck.timestampProblem(row.createOn(), row.lastSessionRefresh(), now);
        RealmModel realm = problem == null ? session.realms().getRealm(row.realmId()) : null;
        if (problem == null && realm == null) {
            problem = "realm " + row.realmId() + " does not exist";
        }
        if (problem == null && isLocalUser(row.userId()) && !localUsers.contains(row.userId())) {
            problem = "user " + row.userId() + " does not exist";
        }
        if (problem != null) {
            skipped.add(new SkippedRow(id, problem));
            return;
        }
        if (caches.isCached(id)) {
            alreadyCached++; // a request loaded it first; its state is at least as new
            return;
        }
        PersistentUserSessionAdapter model = new PersistentUserSessionAdapter(session, row, realm, row.userId(), new HashMap<>());
        try {
            model.getNotes(); // DATA is parsed lazily: parse it now, so a corrupt row never reaches the cache
        } catch (RuntimeException e) {
            skipped.add(new SkippedRow(id, "DATA is not valid session JSON (" + e.getMessage() + ")"));
            return;
        }
        List<String> clientIds = new ArrayList<>();
        for (ImmutablePersistentClientSessionEntity clientRow : clientRows) {
            ClientModel client = realm.getClientById(clientRow.getClientId());
            if (client == null) {
                continue; // client deleted: Keycloak's own loading drops such client sessions the same way
            }
            var clientSession = new PersistentAuthenticatedClientSessionAdapter(session, clientRow, realm, client, model);
            try {
                clientSession.getNotes();
            } catch (RuntimeException e) {
                skipped.add(new SkippedRow(id, "client session " + clientRow.getClientId() + " has invalid DATA ("
                        + e.getMessage() + ")"));
                continue;
            }
            model.getAuthenticatedClientSessions().put(clientRow.getClientId(), clientSession);
            clientIds.add(clientRow.getClientId());
        }
        if (importIntoCache(provider, model, id)) {
            imported.add(new ImportedSession(id, List.copyOf(clientIds)));
            clientSessions += clientIds.size();
        } else {
            expired++;
        }
    }

    /** @return false when Keycloak's own timeout rules say the session has expired (nothing is cached then) */
    private boolean importIntoCache(UserSessionProvider provider, PersistentUserSessionAdapter model, String id) {
        if (persistentSessions) {
            return ((PersistentUserSessionProvider) provider).importUserSession(model, true) != null;
        }
        // Volatile mode: a single session takes Keycloak's put-if-absent-with-expiration path (a bulk import would
        // put entries without lifespan and overwrite newer ones).
        provider.importUserSessions(List.of(model), true);
        return caches.isCached(id);
    }

    private void removeDeletedMeanwhile() {
        DeletedSessionSweep.Result sweep = DeletedSessionSweep.sweep(em, caches, imported, true);
        gone += sweep.sessionsRemoved();
        imported.clear();
        imported.addAll(sweep.kept());
        clientSessions = imported.stream().mapToLong(s -> s.clientIds().size()).sum();
    }

    static boolean isLocalUser(String userId) {
        return userId != null && StorageId.isLocalStorage(userId);
    }
}
