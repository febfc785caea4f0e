package dev.offlinepreload.report;

/** Where a node's preloading stands; shown in logs and as the metric keycloak.offline.preload.state. */
public enum PreloadState {
    /** Not started yet, or switched off by configuration. */
    IDLE,
    /**
     * With persistent sessions and adaptive-load: the first pass waits until the node has had no request for
     * quiet-start-seconds once every expected node has started (25 s more without that signal, 10 s after a request),
     * running nothing else meanwhile.
     */
    WAITING_FOR_QUIET,
    /** Waiting for the expected cluster members and a settled cache topology. */
    WAITING_FOR_NODES,
    LOADING,
    /** The last pass finished; the caches hold this node's share (within capacity). */
    DONE,
    /** The last pass failed; the node serves sessions lazily until the next topology change. */
    FAILED,
    /** Preloading does not apply here (external Infinispan, no session caches, version mismatch, not a participant). */
    NOT_APPLICABLE
}
