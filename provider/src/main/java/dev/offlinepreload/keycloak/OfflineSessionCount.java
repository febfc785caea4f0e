package dev.offlinepreload.keycloak;

import java.util.Map;

import dev.offlinepreload.load.SessionCount;
import jakarta.persistence.EntityManager;

/**
 * Counts the offline sessions in the database that have not expired, realm by realm with each realm's own oldest
 * allowed last refresh, and their client sessions. Two aggregate queries per realm, served by this provider's index on
 * (realm, offline flag, last refresh), OFFPRELOAD_USS_EXPIRY_REFRESH, where it exists (a scan of the table otherwise),
 * and the client sessions' primary key; nothing is read into memory. Each counts a non-null key column, not the
 * entity: the client session's key is composite, and a tuple count is not portable.
 */
final class OfflineSessionCount {

    private static final String SESSIONS = "select count(s.userSessionId) from PersistentUserSessionEntity s"
            + " where s.realmId = :realm and s.offline = :offline and s.lastSessionRefresh >= :oldest";
    private static final String CLIENT_SESSIONS = "select count(c.userSessionId)"
            + " from PersistentClientSessionEntity c, PersistentUserSessionEntity s"
            + " where s.realmId = :realm and s.offline = :offline and s.lastSessionRefresh >= :oldest"
            + " and c.userSessionId = s.userSessionId and c.offline = :offline";

    private OfflineSessionCount() {
    }

    /** @param oldestByRealm per realm id, the oldest last refresh of a session that has not expired */
    static SessionCount count(EntityManager em, Map<String, Integer> oldestByRealm) {
        long sessions = 0;
        long clientSessions = 0;
        for (Map.Entry<String, Integer> realm : oldestByRealm.entrySet()) {
            sessions += count(em, SESSIONS, realm.getKey(), realm.getValue());
            clientSessions += count(em, CLIENT_SESSIONS, realm.getKey(), realm.getValue());
        }
        return new SessionCount(sessions, clientSessions);
    }

    private static long count(EntityManager em, String query, String realmId, int oldest) {
        return em.createQuery(query, Long.class)
                .setParameter("realm", realmId)
                .setParameter("offline", SessionQueries.OFFLINE)
                .setParameter("oldest", oldest)
                .setHint("org.hibernate.readOnly", true)
                .getSingleResult();
    }
}
