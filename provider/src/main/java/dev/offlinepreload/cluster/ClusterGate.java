package dev.offlinepreload.cluster;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

/**
 * Holds loading back until the expected nodes have joined and the offline caches' topology has settled. With one
 * owner and no state transfer, whatever is loaded before the last node joins is partly thrown away again. Unlike
 * Infinispan's own initial-cluster-size, this waits in the background (Keycloak serves requests meanwhile) and on
 * timeout loads with the nodes present instead of failing the node.
 */
public final class ClusterGate {

    private static final Logger log = Logger.getLogger(ClusterGate.class);
    private static final Duration POLL = Duration.ofMillis(250);
    private static final Duration LOG_EVERY = Duration.ofSeconds(30);

    private final String node;
    private final Supplier<TopologySnapshot> topology;
    private final BooleanSupplier closing;

    public ClusterGate(String node, Supplier<TopologySnapshot> topology, BooleanSupplier closing) {
        this.node = node;
        this.topology = topology;
        this.closing = closing;
    }

    /**
     * Blocks until the topology has {@code expectedMembers} members and no rebalance is in progress, or until
     * {@code timeout} has passed and the topology is settled with fewer members.
     *
     * @return the settled topology to plan for, or null when the node is shutting down
     */
    public TopologySnapshot await(int expectedMembers, Duration timeout) throws InterruptedException {
        return await(expectedMembers, timeout, System.nanoTime());
    }

    /**
     * As {@link #await(int, Duration)}, with the timeout counted from {@code sinceNanos} ({@link System#nanoTime()}):
     * the first pass's counts from the node's start, whatever waited before the gate.
     */
    public TopologySnapshot await(int expectedMembers, Duration timeout, long sinceNanos) throws InterruptedException {
        long start = sinceNanos;
        long loggedAt = 0;
        while (!closing.getAsBoolean()) {
            TopologySnapshot snapshot = topology.get();
            long waited = System.nanoTime() - start;
            boolean enough = snapshot.members().size() >= expectedMembers;
            if (snapshot.stable() && enough) {
                if (loggedAt != 0) {
                    log.infof("Offline session preload on %s: %d nodes present %s, starting", node,
                            snapshot.members().size(), snapshot.members());
                }
                return snapshot;
            }
            if (snapshot.stable() && waited >= timeout.toNanos()) {
                log.warnf("Offline session preload on %s: waited %d s for %d nodes, %d present %s; loading with these",
                        node, waited / 1_000_000_000L, expectedMembers, snapshot.members().size(), snapshot.members());
                return snapshot;
            }
            if (loggedAt == 0 || System.nanoTime() - loggedAt > LOG_EVERY.toNanos()) {
                log.infof("Offline session preload on %s waits for %s (present %s, waiting at most %d s more)", node,
                        enough ? "the cache topology to settle" : expectedMembers + " nodes", snapshot.members(),
                        Math.max(0, (timeout.toNanos() - waited) / 1_000_000_000L));
                loggedAt = System.nanoTime();
            }
            Thread.sleep(POLL.toMillis());
        }
        return null;
    }
}
