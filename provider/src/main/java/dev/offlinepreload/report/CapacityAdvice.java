package dev.offlinepreload.report;

import java.util.Locale;

import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.load.SessionCount;

/**
 * Whether the offline sessions in the database fit into the cluster's offline caches, and if not, the two max-count
 * values that would hold them all at the current cluster size and the heap that takes per node.
 * <p>
 * Each session has one owner, so the cluster takes members × what one node takes. A node takes its offlineSessions
 * max-count less the headroom (and at most max-sessions-per-node), and no more sessions than its
 * offlineClientSessions max-count less the headroom holds at the database's average client sessions per session.
 * The advice sizes both caches for the share of the largest owner, plus four standard deviations of how unevenly
 * session ids hash onto the nodes, so that every node's share fits below its headroom.
 *
 * @param database               non-expired offline sessions and their client sessions in the database
 * @param members                nodes in the current topology
 * @param nodeCapacity           sessions this node takes with its current settings (Long.MAX_VALUE: unbounded)
 * @param sessionsMaxCount       advised cache-embedded-offline-sessions-max-count
 * @param clientSessionsMaxCount advised cache-embedded-offline-client-sessions-max-count
 * @param maxSessionsPerNode     advised max-sessions-per-node, or 0 if the configured value (0 included) does not
 *                               stand in the way
 * @param headroomPercent        the configured capacity-headroom-percent
 */
public record CapacityAdvice(SessionCount database, int members, long nodeCapacity, long sessionsMaxCount,
                             long clientSessionsMaxCount, long maxSessionsPerNode, int headroomPercent) {

    /*
     * Heap per cached entry, from the benchmark run of 2026-11-22 (benchmark/results/progress-2026-11-22.log, one node,
     * defaults: batch 1000, 2 workers; live heap from a full collection once the node was idle):
     * a node with nothing loaded keeps 59 MiB alive; 1M sessions with one client session each 2562 MiB; 1M sessions
     * with three client sessions each 4717 MiB. The two extra client sessions per session cost (4717 - 2562) MiB / 2M
     * = 1130 bytes each; a session with one client session (2562 - 59) MiB / 1M = 2625 bytes, so 1495 for the
     * session entry itself. (results.md of 2026-11-21 measured 2.60 KiB per session with its client session.)
     * The run of 2026-11-23 evening (progress-2026-11-23c.log), with equal DATA values shared and sized notes, measured
     * 1031 + 692 bytes on the benchmark's data, whose values all repeat: a lower bound. Production data repeats less,
     * so these figures stay as the cautious bound (docs/sizing.md).
     */
    static final long BYTES_PER_SESSION = 1495;
    static final long BYTES_PER_CLIENT_SESSION = 1130;
    /** How far above the largest owner's expected share a node's share may lie, in standard deviations. */
    private static final double STANDARD_DEVIATIONS = 4;

    /**
     * @param sessionsMaxCount       the offlineSessions cache's max-count now (negative: unbounded)
     * @param clientSessionsMaxCount the offlineClientSessions cache's max-count now (negative: unbounded)
     */
    public static CapacityAdvice of(SessionCount database, TopologySnapshot topology, long sessionsMaxCount,
                                    long clientSessionsMaxCount, PreloadConfig config) {
        double perSession = database.clientSessionsPerSession();
        long clientLimit = config.cacheLimit(clientSessionsMaxCount);
        long nodeCapacity = Math.min(config.fillLimit(sessionsMaxCount),
                clientLimit == Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.floor(clientLimit / perSession));

        double share = Math.min(1, Math.max(topology.largestShare(), 1.0 / topology.members().size()));
        double deviation = STANDARD_DEVIATIONS * Math.sqrt(database.sessions() * share * (1 - share));
        long sessionsPerNode = (long) Math.ceil(database.sessions() * share + deviation);
        long clientSessionsPerNode = (long) Math.ceil(database.clientSessions() * share + perSession * deviation);
        int headroom = config.headroomPercent();
        return new CapacityAdvice(database, topology.members().size(), nodeCapacity,
                Math.max(sessionsMaxCount, maxCountHolding(sessionsPerNode, headroom)),
                Math.max(clientSessionsMaxCount, maxCountHolding(clientSessionsPerNode, headroom)),
                config.maxSessionsPerNode() > 0 && config.maxSessionsPerNode() < sessionsPerNode ? sessionsPerNode : 0,
                headroom);
    }

    /** The smallest max-count that, less the headroom as {@link PreloadConfig#cacheLimit} takes it, holds {@code entries}. */
    static long maxCountHolding(long entries, int headroomPercent) {
        long maxCount = (long) Math.ceil(entries * 100.0 / (100 - headroomPercent));
        while (maxCount > 0 && PreloadConfig.cacheLimit(maxCount - 1, headroomPercent) >= entries) {
            maxCount--;
        }
        while (PreloadConfig.cacheLimit(maxCount, headroomPercent) < entries) {
            maxCount++;
        }
        return maxCount;
    }

    /** Sessions the whole cluster takes with the current settings, if every node has them. */
    public long clusterCapacity() {
        return nodeCapacity > Long.MAX_VALUE / members ? Long.MAX_VALUE : nodeCapacity * members;
    }

    /** Whether every non-expired offline session in the database fits into the cluster's caches. */
    public boolean fits() {
        return database.sessions() <= clusterCapacity();
    }

    /** Heap the advised caches take on one node when full, in bytes. */
    public long heapBytesPerNode() {
        return sessionsMaxCount * BYTES_PER_SESSION + clientSessionsMaxCount * BYTES_PER_CLIENT_SESSION;
    }

    /**
     * The operator's WARN.
     *
     * @param leftOutHere sessions this node owns that its last pass left out for want of room
     */
    public String warning(String node, long leftOutHere) {
        long leftOut = Math.max(database.sessions() - clusterCapacity(), leftOutHere);
        return String.format(Locale.ROOT, "Offline session preload on %s: the database holds %,d offline sessions that "
                        + "have not expired (%,d client sessions, %.2f per session), the caches of %s take "
                        + "%,d of them (%,d per node, with max-count less %d%% headroom). The %,d least recently used (%,d of "
                        + "them owned by this node) stay in the database and are loaded lazily on their next refresh. "
                        + "To cache them all at this cluster size, set on every node "
                        + "cache-embedded-offline-sessions-max-count=%d and "
                        + "cache-embedded-offline-client-sessions-max-count=%d (KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT, "
                        + "KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT)%s; full caches then take about %,d MiB of "
                        + "heap per node (%d bytes per session, %d per client session). Said once per cluster topology; "
                        + "docs/sizing.md explains.",
                node, database.sessions(), database.clientSessions(), database.clientSessionsPerSession(),
                members == 1 ? "1 node" : members + " nodes", clusterCapacity(), nodeCapacity, headroomPercent, leftOut, leftOutHere, sessionsMaxCount,
                clientSessionsMaxCount,
                maxSessionsPerNode > 0 ? " and spi-user-sessions--offline-preload--max-sessions-per-node="
                        + maxSessionsPerNode + " (or 0)" : "",
                (heapBytesPerNode() + (1 << 20) - 1) >> 20, BYTES_PER_SESSION, BYTES_PER_CLIENT_SESSION);
    }
}
