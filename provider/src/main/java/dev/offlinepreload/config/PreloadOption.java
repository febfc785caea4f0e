package dev.offlinepreload.config;

/**
 * Every option of this provider. An operator sets {@code name} as
 * {@code spi-user-sessions--offline-preload--<name>} in keycloak.conf or
 * {@code KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__<NAME>} in the environment. All are read at runtime; no name may end
 * in -enabled, -provider or -provider-default, which Keycloak treats as build-time SPI options.
 */
public enum PreloadOption {

    PRELOADING("preloading", "string", "auto",
            "Load offline sessions from the database into the caches after startup: auto = with volatile sessions "
                    + "only, where a cached session spares a request its database reads (with persistent sessions, "
                    + "Keycloak's default, a refresh reads and writes both rows anyway, and restarts drained their "
                    + "backlog sooner without preloading); true = with persistent sessions too; false = never. "
                    + "(Keycloak's own build-time option 'enabled' switches the whole provider on or off.)"),
    BATCH_SIZE("batch-size", "int", "1000",
            "Offline sessions read and imported per batch, 1 to 100000: one key-range read per table, or id lists split at 1000."),
    WORKERS_PER_NODE("workers-per-node", "int", null,
            "Loader threads per node, 1 to 64; each holds at most one database connection. Default: twice the node's CPUs."),
    PARTICIPATING_NODES("participating-nodes", "string", "*",
            "Comma-separated node names that preload (spi-cache-embedded--default--node-name), or * for all. "
                    + "A node left out serves its share lazily."),
    MAX_SESSIONS_PER_NODE("max-sessions-per-node", "int", "0",
            "Upper bound of offline sessions one node loads; 0 = the offlineSessions cache's max-count less the headroom."),
    CAPACITY_HEADROOM_PERCENT("capacity-headroom-percent", "int", "10",
            "Share of each offline cache's max-count, 0 to 90, left free for sessions created while and after loading."),
    DATABASE_RETRY_SECONDS("database-retry-seconds", "int", "120",
            "How long a batch is retried, 1 to 86400 s, with backoff from 0.5 s to 30 s, when the database fails; "
                    + "then it is reported and the load goes on, or, if the database answered nothing meanwhile, the "
                    + "pass gives up until the next topology change."),
    DATABASE_TIMEOUT_SECONDS("database-timeout-seconds", "int", "60",
            "Longest one statement of the loader may wait for the database, 1 to 3600 s (query timeout, and the read "
                    + "timeout of its connection, so a hung or paused database fails it too); then it counts as a "
                    + "database failure and is retried within database-retry-seconds."),
    EXPECTED_CLUSTER_SIZE("expected-cluster-size", "int", "1",
            "Nodes that must be in the cluster before the first load starts, 1 to 1000; 1 = do not wait."),
    JOIN_TIMEOUT_SECONDS("join-timeout-seconds", "int", "300",
            "How long the first load waits for expected-cluster-size nodes, 0 to 86400 s, counted from the node's "
                    + "start; then it loads with the nodes present and logs which they are."),
    REVOCATION_RECHECK_SECONDS("revocation-recheck-seconds", "int", "30",
            "Seconds after import when each batch is checked against the database again, 1 to 3600, so that a "
                    + "session deleted without going through the caches while it was being loaded is removed again. A "
                    + "due check gives way to requests (one at a time, a tenth of the time, once no request has been at "
                    + "work for 100 ms or the node has kept up with its requests for 1 s) for at most as long again: "
                    + "every check runs within twice this of its batch."),
    MAX_SESSIONS_PER_SECOND("max-sessions-per-second", "int", "0",
            "Most offline sessions one node loads per second, 0 to 10000000; 0 = no cap. Lets a node load gently "
                    + "while it serves requests."),
    ADAPTIVE_LOAD("adaptive-load", "boolean", "true",
            "Let live requests go first: a pass plans and loads at full speed while the node is quiet (no request "
                    + "using sessions at work for 1 s; before the pass has seen one, for 2 s after every node has "
                    + "started, or 10 s) and stops while any is at work; with steady-traffic-percent set it takes that "
                    + "share of one worker while the node keeps up with its requests (none slower than 250 ms, at most "
                    + "2 at work) and stops only while the node is behind; "
                    + "with persistent sessions the first pass also waits for quiet-start-seconds. After five minutes "
                    + "without a quiet second it keeps one worker at least 2% of the time, so every load finishes. "
                    + "false = always every worker, from the start."),
    STEADY_TRAFFIC_PERCENT("steady-traffic-percent", "int", "0",
            "With adaptive-load, the most percent of one worker's time, 0 to 100, a pass takes once the node has "
                    + "kept up with its requests for 5 s (none slower than 250 ms, at most 2 at work at a time), so that "
                    + "a load under traffic that never pauses for a second still moves; within it the share follows "
                    + "what the load costs the requests, timed against 2-s pauses every 10 s. 0 (the default) = load only on "
                    + "a quiet node, and at the floor after five minutes: at 25 the requests' p99 under steady traffic "
                    + "was two to four times stock's while the load ran, on the benchmark's shared cores "
                    + "(docs/performance.md, runs cf and cg)."),
    QUIET_START_SECONDS("quiet-start-seconds", "int", "30",
            "With persistent sessions and adaptive-load, how long a node that has had no request waits once every "
                    + "expected node has started before its first pass begins, 0 to 3600 s (25 s more when a peer "
                    + "cannot say it started). Once a request has come, the pass waits for 10 s without one instead. "
                    + "The default leaves room for a load balancer that admits a node seconds after it is ready; "
                    + "0 = begin as soon as every node has started, for restarts that get no traffic."),
    HOT_WINDOW_SECONDS("hot-window-seconds", "int", "3600",
            "Sessions refreshed within this many seconds before a pass, 0 to 2592000, are loaded first, most recent "
                    + "first, and even while adaptive-load holds the rest back: they are the ones refreshed again soon. "
                    + "0 = no hot tier, everything in key order."),
    HOLD_READINESS("hold-readiness", "string", "auto",
            "Keep the node from becoming ready (startup blocks) while it loads: auto = with volatile sessions, until "
                    + "its recently refreshed sessions (hot-window-seconds) are loaded, at most 60 s, and only once every "
                    + "expected node has joined; true = until its whole share is loaded, at most join-timeout-seconds "
                    + "plus 10 minutes; false = never."),
    BUILD_INDEXES_ONLINE("build-indexes-online", "boolean", "true",
            "Build an index the changelog left out on a large table after startup, in the background, on one node, "
                    + "without blocking writes (PostgreSQL, MySQL, MariaDB). false = only log the SQL for a DBA.");

    private final String key;
    private final String type;
    private final String defaultValue;
    private final String helpText;

    PreloadOption(String key, String type, String defaultValue, String helpText) {
        this.key = key;
        this.type = type;
        this.defaultValue = defaultValue;
        this.helpText = helpText;
    }

    /** The kebab-case name inside the provider's config scope. */
    public String key() {
        return key;
    }

    public String type() {
        return type;
    }

    /** Null where the default is computed (e.g. from the CPUs). */
    public String defaultValue() {
        return defaultValue;
    }

    public String helpText() {
        return helpText;
    }

    /** How an operator writes it in keycloak.conf; used in every error message. */
    public String confName() {
        return "spi-user-sessions--offline-preload--" + key;
    }
}
