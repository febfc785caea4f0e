package dev.offlinepreload.keycloak;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.offlinepreload.plan.Batch;
import jakarta.persistence.EntityManager;
import jakarta.persistence.TypedQuery;
import org.keycloak.models.jpa.session.ImmutablePersistentClientSessionEntity;
import org.keycloak.models.jpa.session.ImmutablePersistentUserSessionEntity;

/**
 * The loader's queries, in JPQL over Keycloak's own session entities so Hibernate writes each database's dialect and
 * schema. A batch is read either as a key range (one range scan of each table's primary key, no per-id work) or by
 * id; id lists are cut at 1000 (Oracle's IN-list limit). Every query is served by a primary key or an existing index,
 * and none takes a lock.
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
    private static final String RANGE = ">= :first and %s <= :last";

    /** Every offline session refreshed since the oldest idle window of all realms, in key order. */
    private static final String CANDIDATES = "select s.userSessionId, s.lastSessionRefresh, s.realmId from PersistentUserSessionEntity s"
            + " where s.offline = :offline and s.lastSessionRefresh >= :oldest order by s.userSessionId";
    /** Every offline session id, in key order: an index-only scan of the primary key, no sort. */
    private static final String KEYS = "select s.userSessionId from PersistentUserSessionEntity s where s.offline = :offline"
            + " order by s.userSessionId";
    private static final String USER_SESSIONS = "select new org.keycloak.models.jpa.session.ImmutablePersistentUserSessionEntity("
            + "s.userSessionId, s.realmId, s.userId, s.createdOn, s.lastSessionRefresh, s.brokerSessionId, s.offline, s.data, s.rememberMe)"
            + " from PersistentUserSessionEntity s where s.offline = :offline and s.userSessionId ";
    /** The same as Keycloak's named query findClientSessionsOrderedByIdExactReadOnly. */
    private static final String CLIENT_SESSIONS = "select new org.keycloak.models.jpa.session.ImmutablePersistentClientSessionEntity("
            + "c.userSessionId, c.clientId, c.clientStorageProvider, c.externalClientId, c.offline, c.data, c.realmId, c.timestamp)"
            + " from PersistentClientSessionEntity c where c.offline = :offline and c.userSessionId ";
    private static final String USER_SESSION_IDS = "select s.userSessionId from PersistentUserSessionEntity s"
            + " where s.offline = :offline and s.userSessionId ";
    private static final String CLIENT_SESSION_KEYS = "select c.userSessionId, c.clientId, c.clientStorageProvider, c.externalClientId"
            + " from PersistentClientSessionEntity c where c.offline = :offline and c.userSessionId ";
    private static final String LOCAL_USER_IDS = "select u.id from UserEntity u where u.id in " + IDS;

    private SessionQueries() {
    }

    static TypedQuery<String> keys(EntityManager em) {
        return em.createQuery(KEYS, String.class)
                .setParameter("offline", OFFLINE)
                .setHint("org.hibernate.fetchSize", 10_000)
                .setHint("org.hibernate.readOnly", true);
    }

    static TypedQuery<Object[]> candidates(EntityManager em, int oldest) {
        return em.createQuery(CANDIDATES, Object[].class)
                .setParameter("offline", OFFLINE)
                .setParameter("oldest", oldest)
                .setHint("org.hibernate.fetchSize", 10_000)
                .setHint("org.hibernate.readOnly", true);
    }

    /** The batch's user session rows, and in a range also the rows of sessions between them that it does not hold. */
    static List<ImmutablePersistentUserSessionEntity> userSessions(EntityManager em, Batch batch) {
        return read(em, USER_SESSIONS, "s.userSessionId", ImmutablePersistentUserSessionEntity.class, batch);
    }

    /** Keycloak's own read-only projection of the client sessions of the batch (or its range). */
    static List<ImmutablePersistentClientSessionEntity> clientSessions(EntityManager em, Batch batch) {
        return read(em, CLIENT_SESSIONS, "c.userSessionId", ImmutablePersistentClientSessionEntity.class, batch);
    }

    /** Which user sessions of the batch (or its range) still exist. */
    static Set<String> existingUserSessionIds(EntityManager em, Batch batch) {
        return new HashSet<>(read(em, USER_SESSION_IDS, "s.userSessionId", String.class, batch));
    }

    /** Existing client sessions of the batch (or its range) as "userSessionId/clientId" (clientId as Keycloak resolves it). */
    static Set<String> existingClientSessionKeys(EntityManager em, Batch batch) {
        return read(em, CLIENT_SESSION_KEYS, "c.userSessionId", Object[].class, batch).stream()
                .map(row -> clientSessionKey((String) row[0], new ImmutablePersistentClientSessionEntity((String) row[0],
                        (String) row[1], (String) row[2], (String) row[3], OFFLINE, null, null, 0).getClientId()))
                .collect(Collectors.toSet());
    }

    static Set<String> existingLocalUsers(EntityManager em, Collection<String> userIds) {
        return new HashSet<>(chunked(userIds, chunk -> byIds(em, LOCAL_USER_IDS, String.class, chunk).getResultList()));
    }

    static String clientSessionKey(String userSessionId, String clientId) {
        return userSessionId + "/" + clientId;
    }

    private static <T> List<T> read(EntityManager em, String select, String keyColumn, Class<T> type, Batch batch) {
        if (batch.range()) {
            return em.createQuery(select + RANGE.formatted(keyColumn), type)
                    .setParameter("offline", OFFLINE)
                    .setParameter("first", batch.first())
                    .setParameter("last", batch.last())
                    .setHint("org.hibernate.fetchSize", Math.min(batch.size() * 2, 10_000))
                    .setHint("org.hibernate.readOnly", true)
                    .getResultList();
        }
        return chunked(batch.ids(), chunk -> byIds(em, select + "in " + IDS, type, chunk)
                .setParameter("offline", OFFLINE).setHint("org.hibernate.readOnly", true).getResultList());
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
    private static <T> TypedQuery<T> byIds(EntityManager em, String jpql, Class<T> type, List<String> chunk) {
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
