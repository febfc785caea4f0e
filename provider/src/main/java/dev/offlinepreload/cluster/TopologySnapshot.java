package dev.offlinepreload.cluster;

import java.util.List;
import java.util.function.Predicate;

/**
 * The offline-sessions cache's topology at one moment, as far as loading cares.
 *
 * @param id      Infinispan's topology id; it changes whenever ownership can change
 * @param stable  no rebalance in progress
 * @param members node names in the topology
 * @param owns    whether this node is the primary owner of a user session id in this topology
 */
public record TopologySnapshot(int id, boolean stable, List<String> members, Predicate<String> owns) {
}
