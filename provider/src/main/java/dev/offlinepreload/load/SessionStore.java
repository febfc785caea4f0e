package dev.offlinepreload.load;

import java.util.List;
import java.util.function.Consumer;

import dev.offlinepreload.plan.Candidate;

/**
 * Everything the loader needs from Keycloak, in terms of session ids only. The one implementation lives in the
 * keycloak package (the only code that touches Keycloak internals); tests use fakes.
 */
public interface SessionStore {

    /** Streams every offline session that has not expired by the realm's idle timeout, in no particular order. */
    void forEachCandidate(Consumer<Candidate> sink);

    /**
     * Reads the full rows of these offline sessions with their client sessions, imports them into this node's
     * caches if absent, then re-reads which of them still exist, waiting for any transaction that is deleting them,
     * and removes from the caches what was deleted meanwhile.
     *
     * @param ids at most one batch of session ids, all owned by this node
     */
    BatchResult importBatch(List<String> ids);

    /**
     * Checks imported sessions against the database once more and removes from the caches those deleted since.
     *
     * @return how many user or client sessions were removed
     */
    int removeDeleted(List<ImportedSession> imported);
}
