package dev.offlinepreload.keycloak;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.offlinepreload.load.ImportedSession;
import jakarta.persistence.EntityManager;

/**
 * The revocation check, shared by both of its runs: which loaded sessions and client sessions the database no longer
 * has, taken out of the caches again.
 */
final class DeletedSessionSweep {

    /**
     * @param kept                the loaded sessions still in the database, with the client sessions still there
     * @param sessionsRemoved     user sessions evicted (with all their client sessions)
     * @param clientSessionsRemoved client sessions evicted from user sessions that remain
     */
    record Result(List<ImportedSession> kept, int sessionsRemoved, int clientSessionsRemoved) {
    }

    private DeletedSessionSweep() {
    }

    /** @param waitForDeletes read with a shared lock, waiting for transactions that are deleting these rows */
    static Result sweep(EntityManager em, OfflineCaches caches, List<ImportedSession> imported, boolean waitForDeletes) {
        if (imported.isEmpty()) {
            return new Result(List.of(), 0, 0);
        }
        List<String> ids = imported.stream().map(ImportedSession::id).toList();
        Set<String> users = SessionQueries.existingUserSessionIds(em, ids, waitForDeletes);
        Set<String> clients = SessionQueries.existingClientSessionKeys(em, ids, waitForDeletes);
        List<ImportedSession> kept = new ArrayList<>(imported.size());
        List<ImportedSession> goneUsers = new ArrayList<>();
        int clientSessionsRemoved = 0;
        for (ImportedSession s : imported) {
            if (!users.contains(s.id())) {
                goneUsers.add(s);
                continue;
            }
            List<String> clientIds = new ArrayList<>(s.clientIds());
            for (String clientId : s.clientIds()) {
                if (!clients.contains(SessionQueries.clientSessionKey(s.id(), clientId))) {
                    caches.evictClientSession(s.id(), clientId);
                    clientIds.remove(clientId);
                    clientSessionsRemoved++;
                }
            }
            kept.add(new ImportedSession(s.id(), List.copyOf(clientIds)));
        }
        caches.evict(goneUsers);
        return new Result(kept, goneUsers.size(), clientSessionsRemoved);
    }
}
