package dev.offlinepreload.keycloak;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.offlinepreload.load.ImportedSession;
import dev.offlinepreload.plan.Batch;
import jakarta.persistence.EntityManager;

/**
 * The delayed existence check of the revocation guard: which loaded sessions and client sessions the database no
 * longer has, taken out of the caches again. One query per table and batch, served by the primary key (an
 * index-only range scan for a range batch), without locks.
 */
final class DeletedSessionSweep {

    private DeletedSessionSweep() {
    }

    /** @return how many user sessions (with their client sessions) and lone client sessions were taken out */
    static int sweep(EntityManager em, SessionQueries queries, OfflineCaches caches, Batch batch, List<ImportedSession> imported) {
        if (imported.isEmpty()) {
            return 0;
        }
        Set<String> users = queries.existingUserSessionIds(em, batch);
        Set<String> clients = queries.existingClientSessionKeys(em, batch);
        List<ImportedSession> goneUsers = new ArrayList<>();
        int clientSessionsRemoved = 0;
        for (ImportedSession s : imported) {
            if (!users.contains(s.id())) {
                goneUsers.add(s);
                continue;
            }
            for (String clientId : s.clientIds()) {
                if (!clients.contains(SessionQueries.clientSessionKey(s.id(), clientId))) {
                    caches.evictClientSession(s.id(), clientId);
                    clientSessionsRemoved++;
                }
            }
        }
        caches.evict(goneUsers);
        return goneUsers.size() + clientSessionsRemoved;
    }
}
