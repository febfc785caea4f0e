package dev.offlinepreload.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The provider's effective configuration: parsed and validated once at startup, immutable afterwards.
 *
 * @param preloading           when this node preloads: with volatile sessions only (auto), always, or never
 * @param batchSize            sessions per batch (one read + one import + one check per batch)
 * @param workers              loader threads on this node
 * @param participatingNodes   node names allowed to preload; empty = all
 * @param maxSessionsPerNode   upper bound of sessions loaded on this node; 0 = the cache's max-count less the headroom
 * @param headroomPercent      share of each cache's max-count left free
 * @param databaseRetry        how long a failing batch is retried
 * @param databaseTimeout      longest one loader statement may wait for the database
 * @param expectedClusterSize  members the first pass waits for
 * @param joinTimeout          how long the first pass waits for them
 * @param revocationRecheck    delay of the second database check of each imported batch
 * @param maxSessionsPerSecond most sessions loaded per second on this node; 0 = no cap
 * @param adaptiveLoad         whether the load yields to live requests (docs/how-loading-works.md)
 * @param steadyTrafficPercent with adaptive-load, the percent of one worker's time the load takes while the node keeps
 *                             up with steady traffic
 * @param quietStart           with persistent sessions and adaptive-load, how long the first pass waits for a request
 *                             once every expected node has started
 * @param hotWindow            sessions refreshed within it are loaded first; zero = no hot tier
 * @param holdReadiness        what startup waits for: the hot tier (auto), the whole share (true) or nothing
 * @param buildIndexesOnline   whether a node builds the indexes the changelog left out (docs/indexes.md)
 */
public record PreloadConfig(Preloading preloading, int batchSize, int workers, Set<String> participatingNodes,
                            int maxSessionsPerNode, int headroomPercent, Duration databaseRetry, Duration databaseTimeout,
                            int expectedClusterSize, Duration joinTimeout,
                            Duration revocationRecheck, int maxSessionsPerSecond, boolean adaptiveLoad,
                            int steadyTrafficPercent, Duration quietStart, Duration hotWindow,
                            ReadinessHold holdReadiness,
                            boolean buildIndexesOnline) {

    /**
     * Used when the configuration is invalid: the node keeps serving, lazily, like stock Keycloak, and changes no
     * schema on its own.
     */
    public static final PreloadConfig DISABLED = new PreloadConfig(Preloading.FALSE, 1000, 1, Set.of(), 0, 10,
            Duration.ofSeconds(120), Duration.ofSeconds(60), 1, Duration.ofSeconds(300), Duration.ofSeconds(30), 0, true,
            0, Duration.ofSeconds(30), Duration.ofHours(1), ReadinessHold.FALSE, false);

    /**
     * @param lookup returns the raw value an operator set for an option key, or null when unset
     * @param cpus   the node's CPU count; the default number of workers is twice that (a worker waits for the
     *               database about half of its time: on 2 CPUs, 4 workers loaded 1M sessions in 32 s, 2 in 37 s and
     *               8 in 33 s, benchmark/results/quick-2026-11-23.log)
     * @throws InvalidOptionException naming the first option whose value cannot be used
     */
    public static PreloadConfig parse(Function<String, String> lookup, int cpus) {
        OptionReader options = new OptionReader(lookup);
        return new PreloadConfig(
                options.choice(PreloadOption.PRELOADING, Preloading.class),
                options.integer(PreloadOption.BATCH_SIZE, 1, 100_000),
                options.integer(PreloadOption.WORKERS_PER_NODE, 1, 64, Math.max(1, Math.min(2 * cpus, 64))),
                options.nameList(PreloadOption.PARTICIPATING_NODES),
                options.integer(PreloadOption.MAX_SESSIONS_PER_NODE, 0, Integer.MAX_VALUE),
                options.integer(PreloadOption.CAPACITY_HEADROOM_PERCENT, 0, 90),
                Duration.ofSeconds(options.integer(PreloadOption.DATABASE_RETRY_SECONDS, 1, 86_400)),
                Duration.ofSeconds(options.integer(PreloadOption.DATABASE_TIMEOUT_SECONDS, 1, 3600)),
                options.integer(PreloadOption.EXPECTED_CLUSTER_SIZE, 1, 1000),
                Duration.ofSeconds(options.integer(PreloadOption.JOIN_TIMEOUT_SECONDS, 0, 86_400)),
                Duration.ofSeconds(options.integer(PreloadOption.REVOCATION_RECHECK_SECONDS, 1, 3600)),
                options.integer(PreloadOption.MAX_SESSIONS_PER_SECOND, 0, 10_000_000),
                options.bool(PreloadOption.ADAPTIVE_LOAD),
                options.integer(PreloadOption.STEADY_TRAFFIC_PERCENT, 0, 100),
                Duration.ofSeconds(options.integer(PreloadOption.QUIET_START_SECONDS, 0, 3600)),
                Duration.ofSeconds(options.integer(PreloadOption.HOT_WINDOW_SECONDS, 0, 2_592_000)),
                options.choice(PreloadOption.HOLD_READINESS, ReadinessHold.class),
                options.bool(PreloadOption.BUILD_INDEXES_ONLINE));
    }

    /** Whether the node with this name takes part in preloading. */
    public boolean participates(String nodeName) {
        return participatingNodes.isEmpty() || participatingNodes.contains(nodeName);
    }

    /**
     * How many entries the loader may put into a cache that holds at most {@code maxCount} entries per node
     * (negative = unbounded): the cache's bound less the headroom, and never more than max-sessions-per-node.
     */
    public long fillLimit(long maxCount) {
        long limit = cacheLimit(maxCount);
        return maxSessionsPerNode > 0 ? Math.min(limit, maxSessionsPerNode) : limit;
    }

    /**
     * How many entries the loader may put into a cache that holds at most {@code maxCount} entries per node
     * (negative = unbounded), leaving the headroom free. max-sessions-per-node counts user sessions, so it does not
     * apply here: this is the limit of the client-session cache.
     */
    public long cacheLimit(long maxCount) {
        return cacheLimit(maxCount, headroomPercent);
    }

    /** {@link #cacheLimit(long)} for a given headroom: what the loader may put into a cache of {@code maxCount}. */
    public static long cacheLimit(long maxCount, int headroomPercent) {
        return maxCount < 0 ? Long.MAX_VALUE : maxCount - (maxCount * headroomPercent / 100);
    }

    /** Effective values by option key, for the startup log line and the admin server info. */
    public Map<String, String> describe() {
        Map<String, String> values = new LinkedHashMap<>();
        values.put(PreloadOption.PRELOADING.key(), preloading.value());
        values.put(PreloadOption.BATCH_SIZE.key(), Integer.toString(batchSize));
        values.put(PreloadOption.WORKERS_PER_NODE.key(), Integer.toString(workers));
        values.put(PreloadOption.PARTICIPATING_NODES.key(),
                participatingNodes.isEmpty() ? "*" : String.join(",", new TreeSet<>(participatingNodes)));
        values.put(PreloadOption.MAX_SESSIONS_PER_NODE.key(), Integer.toString(maxSessionsPerNode));
        values.put(PreloadOption.CAPACITY_HEADROOM_PERCENT.key(), Integer.toString(headroomPercent));
        values.put(PreloadOption.DATABASE_RETRY_SECONDS.key(), Long.toString(databaseRetry.toSeconds()));
        values.put(PreloadOption.DATABASE_TIMEOUT_SECONDS.key(), Long.toString(databaseTimeout.toSeconds()));
        values.put(PreloadOption.EXPECTED_CLUSTER_SIZE.key(), Integer.toString(expectedClusterSize));
        values.put(PreloadOption.JOIN_TIMEOUT_SECONDS.key(), Long.toString(joinTimeout.toSeconds()));
        values.put(PreloadOption.REVOCATION_RECHECK_SECONDS.key(), Long.toString(revocationRecheck.toSeconds()));
        values.put(PreloadOption.MAX_SESSIONS_PER_SECOND.key(), Integer.toString(maxSessionsPerSecond));
        values.put(PreloadOption.ADAPTIVE_LOAD.key(), Boolean.toString(adaptiveLoad));
        values.put(PreloadOption.STEADY_TRAFFIC_PERCENT.key(), Integer.toString(steadyTrafficPercent));
        values.put(PreloadOption.QUIET_START_SECONDS.key(), Long.toString(quietStart.toSeconds()));
        values.put(PreloadOption.HOT_WINDOW_SECONDS.key(), Long.toString(hotWindow.toSeconds()));
        values.put(PreloadOption.HOLD_READINESS.key(), holdReadiness.value());
        values.put(PreloadOption.BUILD_INDEXES_ONLINE.key(), Boolean.toString(buildIndexesOnline));
        return values;
    }
}
