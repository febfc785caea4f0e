package dev.offlinepreload.cluster;

import java.util.List;
import java.util.function.Predicate;

/**
 * Both offline caches' topology at one moment, as far as loading cares.
 *
 * @param id      changes whenever ownership in either cache can change (both caches' Infinispan topology ids)
 * @param stable  both caches have the same members, and neither is rebalancing or resolving conflicts
 * @param members node names in the offlineSessions topology
 * @param owns    whether this node is the primary owner of a user session id (and so of its client sessions)
 * @param largestShare the largest share of the key space one member owns (its primary segments / all segments): 1 for
 *                     one member, 1/members when the segments divide evenly, a bit more when they do not
 * @param keptShare    of the sessions {@code owns} lets this node plan, the share whose entries it keeps: 1 where it
 *                     plans the sessions it owns; its own share of the key space where it reads every session and
 *                     keeps the keys it owns (Keycloak 26.4)
 */
public record TopologySnapshot(long id, boolean stable, List<String> members, Predicate<String> owns, double largestShare,
                               double keptShare) {

    /** A node that plans the sessions it owns. */
    public TopologySnapshot(long id, boolean stable, List<String> members, Predicate<String> owns, double largestShare) {
        this(id, stable, members, owns, largestShare, 1);
    }

    /** How many sessions a node may plan to keep {@code entries} of them: more where it keeps only a share. */
    public long planned(long entries) {
        return keptShare >= 1 ? entries : (long) Math.min(Long.MAX_VALUE, entries / keptShare);
    }
}
