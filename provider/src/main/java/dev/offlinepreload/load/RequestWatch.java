package dev.offlinepreload.load;

/**
 * One thread's view of the node's Keycloak requests ({@link SessionStore#newRequestWatch()}): each watch remembers what
 * it has seen since its previous look, so the requests it reports are new to it however short they were.
 */
public interface RequestWatch {

    /**
     * A request that took longer than this from its arrival to its response waited in a queue: the node was behind.
     * Refreshes and introspections take 15-30 ms at the median and under 300 ms at p99 once a restart's backlog has
     * drained on the benchmark's 2 cores, and seconds while it drains (docs/performance.md).
     */
    long SLOW_MILLIS = 250;

    /**
     * The most requests at work at a time on a node that keeps up with its traffic (none slow): the revocation check and
     * the load take their small shares then.
     */
    int STEADY_AT_WORK = 2;

    /** Requests at work now, and at least 1 if one began since the previous look. */
    int busy();

    /** Requests that finished since the previous look after more than {@link #SLOW_MILLIS} at work. */
    int slow();

    /** Requests that finished since the previous look: how many, and their time from arrival to response in all. */
    Finished finished();

    /** Some finished requests: their number and their time at work summed, in milliseconds. */
    record Finished(int count, double millis) {

        public static final Finished NONE = new Finished(0, 0);
    }
}
