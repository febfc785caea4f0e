package dev.offlinepreload.plan;

import java.util.List;

/**
 * What one node loads in one pass, and how the plan came about.
 *
 * @param batches       the sessions to read and import: the hot ones first (most recent first), then the rest in key order
 * @param seen          offline sessions in the database (only non-expired ones when recency had to decide)
 * @param owned         of those, the ones whose cache key this node owns
 * @param alreadyCached owned sessions within the limit that the caches already hold whole (not reloaded)
 * @param overCapacity  owned sessions left out because the node's limit was reached (the least recent)
 * @param limit         how many owned sessions the node keeps cached at most
 * @param hot           of the sessions to load, those refreshed within hot-window-seconds (loaded first)
 */
public record LoadPlan(List<Batch> batches, long seen, long owned, long alreadyCached, long overCapacity, long limit,
                       long hot) {

    public LoadPlan {
        batches = List.copyOf(batches);
    }

    /** Sessions to load. */
    public long toLoad() {
        return batches.stream().mapToLong(Batch::size).sum();
    }
}
