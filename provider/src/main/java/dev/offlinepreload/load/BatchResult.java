package dev.offlinepreload.load;

import java.util.List;

/**
 * What one batch did.
 *
 * @param imported        sessions this batch put into the caches (whole, or the client sessions a cached session
 *                        was missing), with the client sessions it put
 * @param clientSessions  client sessions imported
 * @param alreadyCached   sessions whose entry a request had put into the cache first (left as they were)
 * @param repaired        of those, sessions whose missing client sessions this batch added
 * @param expired         sessions skipped because they expired (idle or max lifespan, as Keycloak computes them)
 * @param gone            sessions deleted from the database before or while the batch ran
 * @param skipped         rows that cannot be loaded (corrupt data, missing realm or user), with the reason
 * @param revoked         sessions and client sessions this batch put and took out again at once because a logout or
 *                        revocation removed them from the caches while, or just before, the batch read them (the
 *                        sessions among them are also counted as {@code gone})
 * @param readForOthers   sessions read for the client sessions this node owns of them, whose outcome the node holding
 *                        their entry counts (where client sessions have owners of their own: every node reads every
 *                        session)
 */
public record BatchResult(List<ImportedSession> imported, long clientSessions, long alreadyCached, long repaired,
                          long expired, long gone, List<SkippedRow> skipped, long revoked, long readForOthers) {

    /** A batch of sessions this node counts, all of them. */
    public BatchResult(List<ImportedSession> imported, long clientSessions, long alreadyCached, long repaired,
                       long expired, long gone, List<SkippedRow> skipped, long revoked) {
        this(imported, clientSessions, alreadyCached, repaired, expired, gone, skipped, revoked, 0);
    }

    /** A row that was not loaded, and why; logged with its id so an operator can look at it. */
    public record SkippedRow(String id, String reason) {
    }

    /**
     * Sessions of the batch newly put into the cache: whose entry this node put (on Keycloak 26.4 a node may put only
     * client sessions of a session whose entry another node holds; that node counts the session).
     */
    public long loaded() {
        return imported.stream().filter(ImportedSession::entryHere).count() - repaired;
    }
}
