package dev.offlinepreload.keycloak;

import java.util.Collection;
import java.util.Set;
import java.util.stream.Collectors;

import org.infinispan.AdvancedCache;
import org.infinispan.Cache;
import org.infinispan.context.Flag;
import org.jboss.logging.Logger;

/**
 * Which nodes of the cluster have finished starting: once Keycloak has started on a node (its PostMigrationEvent,
 * after hold-readiness=auto's wait for the hot tier: just before it reports ready), the node puts a marker into Keycloak's replicated {@code work} cache, which
 * every node reads locally. A marker of a node that has left is removed by the next member that asks, so that a node
 * coming back counts as started only once it has started again. A node without this provider puts none: its peers
 * then fall back to the longer quiet waits (the coordinator's quiet start, {@link dev.offlinepreload.load.AdaptiveLimit}).
 */
final class StartedNodes {

    private static final Logger log = Logger.getLogger(StartedNodes.class);
    private static final String PREFIX = "offline-preload-started:";

    private final AdvancedCache<String, Object> work;

    StartedNodes(Cache<String, Object> work) {
        this.work = work.getAdvancedCache();
    }

    /** Without waiting: a peer slow to answer must not hold up this node's startup. */
    void announce(String node) {
        work.withFlags(Flag.IGNORE_RETURN_VALUES).putAsync(PREFIX + node, node).whenComplete((done, failure) -> {
            if (failure != null) {
                log.warnf("Offline session preload: could not tell the cluster that %s has started (%s); its peers "
                        + "wait 30 quiet seconds after it has joined before they load", node, failure.getMessage());
            }
        });
    }

    /**
     * @param members the nodes asked about
     * @param current the members of the cluster now: markers of any other node are removed
     */
    boolean allStarted(Collection<String> members, Collection<String> current) {
        Set<String> started = work.withFlags(Flag.CACHE_MODE_LOCAL).keySet().stream()
                .filter(key -> key.startsWith(PREFIX))
                .map(key -> key.substring(PREFIX.length()))
                .collect(Collectors.toSet());
        started.stream().filter(node -> !current.contains(node))
                .forEach(node -> work.withFlags(Flag.IGNORE_RETURN_VALUES).remove(PREFIX + node));
        return started.containsAll(members);
    }
}
