package dev.offlinepreload.keycloak;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.offlinepreload.load.ImportedSession;
import dev.offlinepreload.plan.Batch;
import jakarta.persistence.EntityManager;

/**
 * The existence check of the revocation guard, shared by both of its runs (right after a batch imported, and the
 * delayed one): which loaded sessions and client sessions the database no longer has, taken out of the caches again.
 * One query per table and batch, served by the primary key (a range scan for a range batch), without locks.
 */
final class DeletedSessionSweep {

    /**
     * @param kept                  the loaded sessions still in the database, with the client sessions still there
     * @param sessionsRemoved       user sessions evicted (with all their client sessions)
     * @param clientSessionsRemoved client sessions evicted from user sessions that remain
     */
    record Result(List<ImportedSession> kept, int sessionsRemoved, int clientSessionsRemoved) {
    }

    private DeletedSessionSweep() {
    }

    static Result sweep(EntityManager em, OfflineCaches caches, Batch batch, List<ImportedSession> imported) {
        if (imported.isEmpty()) {
            return new Result(List.of(), 0, 0);
        }
        Set<String> users = SessionQueries.existingUserSessionIds(em, batch);
        Set<String> clients = SessionQueries.existingClientSessionKeys(em, batch);
        List<ImportedSession> kept = new ArrayList<>(imported.size());
        List<ImportedSession> goneUsers = new ArrayList<>();
        int clientSessionsRemoved = 0;
        for (ImportedSession s : imported) {
            if (!users.contains(s.id())) {
                goneUsers.add(s);
                continue;
            }
            List<String> clientIds = new ArrayList<>(s.clientIds().size());
            for (String clientId : s.clientIds()) {
                if (clients.contains(SessionQueries.clientSessionKey(s.id(), clientId))) {
                    clientIds.add(clientId);
                } else {
                    caches.evictClientSession(s.id(), clientId);
                    clientSessionsRemoved++;
                }
            }
            kept.add(clientIds.size() == s.clientIds().size() ? s : new ImportedSession(s.id(), List.copyOf(clientIds)));
        }
        caches.evict(goneUsers);
        return new Result(kept, goneUsers.size(), clientSessionsRemoved);
    }
}
