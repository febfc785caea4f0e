package dev.offlinepreload.report;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;

import dev.offlinepreload.load.LoadStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;

/**
 * Micrometer meters on Keycloak's registry (scraped at /metrics on the management port), created once per node.
 * Prometheus names: keycloak_offline_preload_sessions_total{outcome}, keycloak_offline_preload_state{state},
 * keycloak_offline_preload_last_pass_seconds, keycloak_offline_preload_planned_sessions,
 * keycloak_offline_preload_missing_sessions, keycloak_offline_preload_missing_client_sessions,
 * keycloak_offline_preload_database_sessions,
 * keycloak_offline_preload_capacity_sessions.
 */
public final class PreloadMetrics {

    private final LoadStats lifetime = new LoadStats(null);
    private final AtomicReference<PreloadState> state = new AtomicReference<>(PreloadState.IDLE);
    private final AtomicLong loadLimit = new AtomicLong(Double.doubleToRawLongBits(0));
    private final AtomicLong lastPassMillis = new AtomicLong();
    private final AtomicLong planned = new AtomicLong();
    private final AtomicLong missing = new AtomicLong();
    private final AtomicLong missingClientSessions = new AtomicLong();
    /** -1 until the first pass has counted: the gauges then show NaN, not a misleading 0. */
    private final AtomicLong databaseSessions = new AtomicLong(-1);
    private final AtomicLong capacity = new AtomicLong(-1);

    public PreloadMetrics() {
        this(Metrics.globalRegistry);
    }

    PreloadMetrics(MeterRegistry registry) {
        outcome(registry, "loaded", LoadStats::loaded);
        outcome(registry, "already_cached", LoadStats::alreadyCached);
        outcome(registry, "completed", LoadStats::repaired);
        outcome(registry, "expired", LoadStats::expired);
        outcome(registry, "gone", LoadStats::gone);
        outcome(registry, "skipped", LoadStats::skipped);
        outcome(registry, "failed", LoadStats::failed);
        outcome(registry, "revoked_removed", LoadStats::revokedRemoved);
        FunctionCounter.builder("keycloak.offline.preload.client.sessions", lifetime, LoadStats::clientSessions)
                .description("Offline client sessions loaded into this node's cache").register(registry);
        Map<PreloadState, Gauge> gauges = new EnumMap<>(PreloadState.class);
        for (PreloadState s : PreloadState.values()) {
            gauges.put(s, Gauge.builder("keycloak.offline.preload.state", state, ref -> ref.get() == s ? 1 : 0)
                    .tag("state", s.name().toLowerCase()).description("1 for this node's current preload state")
                    .register(registry));
        }
        Gauge.builder("keycloak.offline.preload.last.pass", lastPassMillis, ms -> ms.get() / 1000.0).baseUnit("seconds")
                .description("Duration of this node's last completed load pass").register(registry);
        Gauge.builder("keycloak.offline.preload.load.limit", this, PreloadMetrics::loadLimit)
                .description("Workers the load may use now (below 1: one worker's share of the time); adaptive-load "
                        + "lowers it while live requests wait for a CPU").register(registry);
        Gauge.builder("keycloak.offline.preload.planned.sessions", planned, AtomicLong::get)
                .description("Sessions this node planned to load in its current or last pass").register(registry);
        Gauge.builder("keycloak.offline.preload.missing.sessions", missing, AtomicLong::get)
                .description("Sessions this node's last pass loaded that its caches no longer held whole when the pass "
                        + "ended").register(registry);
        Gauge.builder("keycloak.offline.preload.missing.client.sessions", missingClientSessions, AtomicLong::get)
                .description("Client sessions this node's last pass put that its caches no longer held when the pass "
                        + "ended").register(registry);
        Gauge.builder("keycloak.offline.preload.database.sessions", databaseSessions, PreloadMetrics::known)
                .description("Offline sessions in the database that have not expired, counted after this node's last "
                        + "pass").register(registry);
        Gauge.builder("keycloak.offline.preload.capacity.sessions", capacity, PreloadMetrics::known)
                .description("Offline sessions this node's caches take: max-count less the headroom, at most max-sessions-per-node, and no more than the client-session cache holds at the database's average client sessions per session (+Inf: unbounded)")
                .register(registry);
    }

    private static double known(AtomicLong value) {
        long v = value.get();
        return v < 0 ? Double.NaN : v == Long.MAX_VALUE ? Double.POSITIVE_INFINITY : v;
    }

    private void outcome(MeterRegistry registry, String outcome, ToDoubleFunction<LoadStats> value) {
        FunctionCounter.builder("keycloak.offline.preload.sessions", lifetime, value)
                .tag("outcome", outcome).description("Offline sessions handled by the preloader, by outcome")
                .register(registry);
    }

    /** The governor's current limit, in workers (below 1: one worker's share of the time). */
    public void loadLimit(double workers) {
        loadLimit.set(Double.doubleToRawLongBits(workers));
    }

    public double loadLimit() {
        return Double.longBitsToDouble(loadLimit.get());
    }

    /** The counters every pass adds into. */
    public LoadStats lifetime() {
        return lifetime;
    }

    public PreloadState state() {
        return state.get();
    }

    public void state(PreloadState newState) {
        state.set(newState);
    }

    public void planned(long sessions) {
        planned.set(sessions);
    }

    public void passCompleted(long millis) {
        lastPassMillis.set(millis);
    }

    public void missing(long sessions, long clientSessions) {
        missing.set(sessions);
        missingClientSessions.set(clientSessions);
    }

    /** The last pass's missing sessions; see {@link #missing(long, long)}. */
    public long missing() {
        return missing.get();
    }

    /**
     * @param inDatabase   non-expired offline sessions in the database
     * @param nodeCapacity sessions this node's caches take (Long.MAX_VALUE: unbounded)
     */
    public void capacity(long inDatabase, long nodeCapacity) {
        databaseSessions.set(inDatabase);
        capacity.set(nodeCapacity);
    }

    /** Non-expired offline sessions in the database at the last count; -1 before the first. */
    public long databaseSessions() {
        return databaseSessions.get();
    }

    /** Sessions this node's caches take; -1 before the first count. */
    public long capacity() {
        return capacity.get();
    }
}
