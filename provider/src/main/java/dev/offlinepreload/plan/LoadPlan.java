package dev.offlinepreload.plan;

import java.util.List;

/**
 * What one node loads in one pass, most recently refreshed first, and how the plan came about.
 *
 * @param toLoad        sessions to read and import, most recent first
 * @param seen          non-expired offline sessions in the database
 * @param owned         of those, the ones whose cache key this node owns
 * @param alreadyCached owned sessions within the limit that the cache already holds (not reloaded)
 * @param overCapacity  owned sessions left out because the node's limit was reached (the least recent)
 * @param limit         how many owned sessions the node keeps cached at most
 */
public record LoadPlan(List<Candidate> toLoad, long seen, long owned, long alreadyCached, long overCapacity,
                       long limit) {
}
