package dev.offlinepreload.load;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import dev.offlinepreload.cluster.ClusterStart;
import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.plan.Batch;
import dev.offlinepreload.plan.Candidate;

/**
 * Everything the loader and its coordinator need from Keycloak, in terms of session ids and batches only. The one
 * implementation lives in the keycloak package (the only code that touches Keycloak internals); tests use fakes.
 */
public interface SessionStore {

    /** This node's name in the cluster. */
    String nodeName();

    /** "persistent" (Keycloak's default: sessions written to the database) or "volatile"; for the logs. */
    String sessionMode();

    /** Whether sessions are volatile: a cached session then saves a request its database reads. */
    default boolean volatileSessions() {
        return "volatile".equals(sessionMode());
    }

    /**
     * A view of its own of the Keycloak requests, for one thread that samples them (the quiet start's, the governor's,
     * the revocation check's): how many are at work, and which of them were slow.
     */
    RequestWatch newRequestWatch();

    /**
     * Whether the cluster has at least this many members, and whether every one has finished starting (Keycloak started
     * on it, its HTTP listener opening). Asked every 100 ms (the governor) or 500 ms (the quiet start) until started.
     */
    ClusterStart clusterStart(int expectedMembers);

    /** Both offline caches' topology as this node sees it now. */
    TopologySnapshot topology();

    /** {@link #topology()}'s id alone: asked before every batch, so it must be cheap. */
    default long topologyId() {
        return topology().id();
    }

    /** Whether this node's caches hold the session and every client session its cached entry lists. */
    boolean isCached(String userSessionId);

    /**
     * Of the client sessions a pass put for this session, and those its cached entry lists, how many this node's
     * caches do not hold.
     */
    int missingClientSessions(ImportedSession session);

    /**
     * Starts remembering which sessions are removed through the caches (a logout, a revocation, an admin deletion,
     * this loader's own eviction), whole or one of their client sessions, until the window is closed.
     */
    RemovalWindow watchRemovals();

    /** See {@link #watchRemovals()}. */
    interface RemovalWindow extends AutoCloseable {

        /** Whether the session or one of its client sessions was removed through the caches since the window opened. */
        boolean removed(String userSessionId);

        @Override
        void close();
    }

    /** Max entries per node of the offlineSessions cache; negative = unbounded. */
    long sessionsMaxCount();

    /** Max entries per node of the offlineClientSessions cache; negative = unbounded. */
    long clientSessionsMaxCount();

    /** Client sessions this node's cache holds now. */
    long localClientSessions();

    /** Streams the id of every offline session, in the database's key order (an index-only scan of the key). */
    void forEachKey(Consumer<String> sink);

    /**
     * Streams every offline session that has not expired by its realm's idle timeout, in the database's key order
     * (the order in which key ranges are read).
     */
    void forEachCandidate(Consumer<Candidate> sink);

    /**
     * Streams every offline session refreshed within {@code window} before now (and not expired), in no particular
     * order: the hot tier, read through an index on the last refresh, per realm.
     */
    void forEachRecent(Duration window, Consumer<Candidate> sink);

    /**
     * Counts the offline sessions that have not expired by their realm's idle timeout, with their client sessions:
     * two counts (sessions, client sessions) over all realms, run once per pass before planning, for the capacity advice.
     */
    SessionCount countSessions();

    /**
     * Reads the batch's sessions with their client sessions, imports into this node's caches what they do not hold
     * yet (never overwriting an entry), and takes out again whatever was removed from the caches while the batch ran.
     */
    BatchResult importBatch(Batch batch);

    /**
     * Checks a batch's imported sessions against the database and removes from the caches those deleted
     * since.
     *
     * @return how many user or client sessions were removed
     */
    int removeDeleted(Batch batch, List<ImportedSession> imported);

    /** Removes sessions from this node's caches without asking the database (the fail-safe of the guard). */
    void evict(List<ImportedSession> sessions);
}
