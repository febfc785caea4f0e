package dev.offlinepreload.load;

import java.util.List;

/**
 * What one batch did.
 *
 * @param imported        sessions now in the cache because of this batch, with their client sessions
 * @param clientSessions  client sessions imported
 * @param alreadyCached   sessions a request had put into the cache first (left as they were)
 * @param expired         sessions skipped because they expired (idle or max lifespan, as Keycloak computes them)
 * @param gone            sessions deleted from the database before or while the batch ran
 * @param skipped         rows that cannot be loaded (corrupt data, missing realm or user), with the reason
 */
public record BatchResult(List<ImportedSession> imported, long clientSessions, long alreadyCached, long expired,
                          long gone, List<SkippedRow> skipped) {

    /** A row that was not loaded, and why; logged with its id so an operator can look at it. */
    public record SkippedRow(String id, String reason) {
    }
}
