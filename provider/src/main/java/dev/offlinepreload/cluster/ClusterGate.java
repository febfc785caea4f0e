package dev.offlinepreload.cluster;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

/**
 * Holds loading back until the offline-sessions cache topology has settled: with one owner and no state transfer,
 * whatever is loaded while ownership still moves is partly thrown away again.
 */
public final class ClusterGate {

    private static final Logger log = Logger.getLogger(ClusterGate.class);
    private static final Duration POLL = Duration.ofMillis(250);

    private final Supplier<TopologySnapshot> topology;
    private final BooleanSupplier closing;

    public ClusterGate(Supplier<TopologySnapshot> topology, BooleanSupplier closing) {
        this.topology = topology;
        this.closing = closing;
    }

    /**
     * Blocks until no rebalance is in progress.
     *
     * @return the settled topology, or null when the node is shutting down
     */
    public TopologySnapshot awaitSettled() throws InterruptedException {
        long loggedAt = System.nanoTime();
        while (!closing.getAsBoolean()) {
            TopologySnapshot snapshot = topology.get();
            if (snapshot.stable()) {
                return snapshot;
            }
            if (System.nanoTime() - loggedAt > Duration.ofSeconds(30).toNanos()) {
                log.infof("Offline session preload waits for the cache topology to settle (members %s)", snapshot.members());
                loggedAt = System.nanoTime();
            }
            Thread.sleep(POLL.toMillis());
        }
        return null;
    }
}
