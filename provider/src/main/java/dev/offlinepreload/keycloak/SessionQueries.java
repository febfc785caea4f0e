package dev.offlinepreload.keycloak;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import org.keycloak.models.jpa.session.ImmutablePersistentClientSessionEntity;
import org.keycloak.models.jpa.session.ImmutablePersistentUserSessionEntity;

/**
 * The loader's queries, in JPQL over Keycloak's own session entities so Hibernate writes each database's dialect.
 * Id lists are cut at 1000 (Oracle's IN-list limit) and every query is served by a primary key or an existing index.
 * <p>
 * An id list is bound as single parameters {@code (:id0, ..., :idN)} with N padded up to the next power of two or
 * 1000 (by repeating the last id), never as one list parameter: Hibernate translates a query with a list parameter
 * again for every execution, which cost about a third of the loader's CPU; with fixed single parameters each query
 * has at most 11 shapes and Hibernate translates each once.
 */
final class SessionQueries {

    static final String OFFLINE = "1";
    static final int MAX_IN_LIST = 1000;
    /** Powers of two, then the limit: never more than twice the parameters needed, at most 11 shapes per query. */
    private static final int[] PADDED_SIZES = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, MAX_IN_LIST};
    private static final String IDS = "(:ids)";

    private static final String CANDIDATES = "select s.userSessionId, s.lastSessionRefresh from PersistentUserSessionEntity s"
            + " where s.realmId = :realmId and s.offline = :offline and s.lastSessionRefresh >= :oldest";
    private static final String USER_SESSIONS = "select new org.keycloak.models.jpa.session.ImmutablePersistentUserSessionEntity("
            + "s.userSessionId, s.realmId, s.userId, s.createdOn, s.lastSessionRefresh, s.brokerSessionId, s.offline, s.data, s.rememberMe)"
            + " from PersistentUserSessionEntity s where s.offline = :offline and s.userSessionId in " + IDS;
    /** The same as Keycloak's named query findClientSessionsOrderedByIdExactReadOnly. */
    private static final String CLIENT_SESSIONS = "select new org.keycloak.models.jpa.session.ImmutablePersistentClientSessionEntity("
            + "c.userSessionId, c.clientId, c.clientStorageProvider, c.externalClientId, c.offline, c.data, c.realmId, c.timestamp)"
            + " from PersistentClientSessionEntity c where c.offline = :offline and c.userSessionId in " + IDS;
    private static final String USER_SESSION_IDS = "select s.userSessionId from PersistentUserSessionEntity s"
            + " where s.offline = :offline and s.userSessionId in " + IDS;
    private static final String CLIENT_SESSION_KEYS = "select c.userSessionId, c.clientId, c.clientStorageProvider, c.externalClientId"
            + " from PersistentClientSessionEntity c where c.offline = :offline and c.userSessionId in " + IDS;
    private static final String LOCAL_USER_IDS = "select u.id from UserEntity u where u.id in " + IDS;

    private SessionQueries() {
    }

    static jakarta.persistence.TypedQuery<Object[]> candidates(EntityManager em, String realmId, int oldest) {
        return em.createQuery(CANDIDATES, Object[].class)
                .setParameter("realmId", realmId)
                .setParameter("offline", OFFLINE)
                .setParameter("oldest", oldest)
                .setHint("org.hibernate.fetchSize", 10_000)
                .setHint("org.hibernate.readOnly", true);
    }

    static List<ImmutablePersistentUserSessionEntity> userSessions(EntityManager em, Collection<String> ids) {
        return chunked(ids, chunk -> byIds(em, USER_SESSIONS, ImmutablePersistentUserSessionEntity.class, chunk)
                .setParameter("offline", OFFLINE).setHint("org.hibernate.readOnly", true).getResultList());
    }

    /** Keycloak's own read-only query for the client sessions of given user sessions. */
    static List<ImmutablePersistentClientSessionEntity> clientSessions(EntityManager em, Collection<String> ids) {
        return chunked(ids, chunk -> byIds(em, CLIENT_SESSIONS, ImmutablePersistentClientSessionEntity.class, chunk)
                .setParameter("offline", OFFLINE).setHint("org.hibernate.readOnly", true).getResultList());
    }

    /**
     * Which of these user sessions still exist. With {@code waitForDeletes} the rows are read with a shared lock,
     * so the query waits for any transaction that holds a write lock on them (a logout about to delete) and then
     * sees its outcome.
     */
    static Set<String> existingUserSessionIds(EntityManager em, Collection<String> ids, boolean waitForDeletes) {
        return new HashSet<>(chunked(ids, chunk -> {
            var query = byIds(em, USER_SESSION_IDS, String.class, chunk).setParameter("offline", OFFLINE);
            if (waitForDeletes) {
                query.setLockMode(LockModeType.PESSIMISTIC_READ);
            }
            return query.getResultList();
        }));
    }

    /** Existing client sessions of these user sessions as "userSessionId/clientId" (clientId as Keycloak resolves it). */
    static Set<String> existingClientSessionKeys(EntityManager em, Collection<String> ids, boolean waitForDeletes) {
        return new HashSet<>(chunked(ids, chunk -> {
            var query = byIds(em, CLIENT_SESSION_KEYS, Object[].class, chunk).setParameter("offline", OFFLINE);
            if (waitForDeletes) {
                query.setLockMode(LockModeType.PESSIMISTIC_READ);
            }
            return query.getResultList().stream().map(row -> clientSessionKey((String) row[0],
                    new ImmutablePersistentClientSessionEntity((String) row[0], (String) row[1], (String) row[2],
                            (String) row[3], OFFLINE, null, null, 0).getClientId())).toList();
        }));
    }

    static Set<String> existingLocalUsers(EntityManager em, Collection<String> userIds) {
        return new HashSet<>(chunked(userIds, chunk -> byIds(em, LOCAL_USER_IDS, String.class, chunk).getResultList()));
    }

    static String clientSessionKey(String userSessionId, String clientId) {
        return userSessionId + "/" + clientId;
    }

    /** The query with its id list written out as {@link #paddedSize} single parameters. */
    static String in(String query, List<String> chunk) {
        int size = paddedSize(chunk.size());
        StringBuilder params = new StringBuilder(size * 8).append('(');
        for (int i = 0; i < size; i++) {
            params.append(i == 0 ? ":id0" : ", :id" + i);
        }
        return query.replace(IDS, params.append(')').toString());
    }

    static int paddedSize(int ids) {
        for (int size : PADDED_SIZES) {
            if (ids <= size) {
                return size;
            }
        }
        throw new IllegalArgumentException(ids + " ids in one IN list; at most " + MAX_IN_LIST);
    }

    /** The query for one chunk of ids, written out and bound as padded single parameters. */
    private static <T> jakarta.persistence.TypedQuery<T> byIds(EntityManager em, String jpql, Class<T> type, List<String> chunk) {
        var query = em.createQuery(in(jpql, chunk), type);
        int size = paddedSize(chunk.size());
        for (int i = 0; i < size; i++) {
            query.setParameter("id" + i, chunk.get(Math.min(i, chunk.size() - 1)));
        }
        return query;
    }

    private static <T> List<T> chunked(Collection<String> ids, Function<List<String>, List<T>> query) {
        List<String> all = new ArrayList<>(ids);
        List<T> results = new ArrayList<>(all.size());
        for (int from = 0; from < all.size(); from += MAX_IN_LIST) {
            results.addAll(query.apply(all.subList(from, Math.min(all.size(), from + MAX_IN_LIST))));
        }
        return results;
    }
}
