package dev.offlinepreload.plan;

/**
 * An offline user session the database holds and that has not expired by idle time: just enough to decide whether
 * this node loads it (the full row is read only for sessions the node decides to load).
 *
 * @param id          USER_SESSION_ID, also the cache key
 * @param lastRefresh LAST_SESSION_REFRESH, seconds since the epoch
 */
public record Candidate(String id, int lastRefresh) {
}
