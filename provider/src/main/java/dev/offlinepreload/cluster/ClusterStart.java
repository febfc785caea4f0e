package dev.offlinepreload.cluster;

/**
 * How far a starting cluster has come, as the quiet start and the governor ask: a restarting cluster's traffic comes
 * once its last node is ready. Members join 10–20 s before they have started, and a node without this provider never
 * says it started.
 */
public enum ClusterStart {
    /** Fewer members than expected. */
    FORMING,
    /** The expected members have joined; not every one has said it started. */
    JOINED,
    /** Every member, at least as many as expected, has said it started. */
    STARTED
}
