package dev.offlinepreload.benchmark;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * One measured load of {@code sessions} offline sessions into an empty cache.
 *
 * @param loader       {@link #OURS}, {@link #KC24} or {@link #RAW}
 * @param batch        our batch size, or Keycloak 24's sessionsPerSegment (0 for the raw read)
 * @param workers      our workers per node (0 where it does not apply)
 * @param seconds      wall-clock time of the load
 * @param fromReadySeconds for this provider: from the moment Keycloak said it had started to the end of the load, so a
 *                     wait before the pass (the quiet start) counts; -1 where it does not apply
 * @param peakHeapMiB  highest heap occupancy right after a GC during the load (-1 if not measured)
 * @param liveHeapMiB  live heap after the load (full GC once idle; -1 if not measured)
 * @param dbSeconds    time PostgreSQL spent executing the loader's statements on the session tables
 * @param dbCpuSeconds CPU time of the database container from the node's start to the end of the load (-1 if not
 *                     measured): unlike {@code dbSeconds}, no waiting for a CPU or for the client to take the rows
 * @param nodeCpuSeconds CPU time of the node's container for the load (-1 if not measured): from its start to the end
 *                     of the load, less what the same loader's node took to start with nothing to load
 * @param gcPauseSeconds total GC pause time during the load
 * @param note         e.g. "out of memory" when the load did not finish
 */
record LoadResult(String loader, int sessions, int batch, int workers, double seconds, double fromReadySeconds, long peakHeapMiB,
                  long liveHeapMiB, double dbSeconds, double dbCpuSeconds, double nodeCpuSeconds, double gcPauseSeconds,
                  String note) {

    static final String OURS = "ours";
    static final String KC24 = "Keycloak " + LoaderComparison.KC24_VERSION;
    static final String RAW = "raw JDBC read";
    private static final String OURS_ON = "ours on Keycloak ";

    /** This provider's loads on a node of another Keycloak version than the project's. */
    static String oursOn(String keycloakVersion) {
        return OURS_ON + keycloakVersion;
    }

    /** The Keycloak version of an {@link #oursOn} result, or null. */
    String otherKeycloakVersion() {
        return loader.startsWith(OURS_ON) ? loader.substring(OURS_ON.length()) : null;
    }

    /** The fastest completed load of {@code sessions} by {@code loader}. */
    static Optional<LoadResult> fastest(List<LoadResult> results, String loader, int sessions) {
        return results.stream().filter(r -> r.loader().equals(loader) && r.sessions() == sessions && r.ok())
                .min(Comparator.comparingDouble(LoadResult::seconds));
    }

    LoadResult withLoader(String name) {
        return new LoadResult(name, sessions, batch, workers, seconds, fromReadySeconds, peakHeapMiB, liveHeapMiB, dbSeconds, dbCpuSeconds, nodeCpuSeconds,
                gcPauseSeconds, note);
    }

    double sessionsPerSecond() {
        return seconds > 0 ? sessions / seconds : 0;
    }

    boolean ok() {
        return note.isEmpty();
    }

    static String csvHeader() {
        return "loader,sessions,batch,workers,seconds,from_ready_seconds,sessions_per_s,peak_heap_mib,live_heap_mib,db_seconds,db_cpu_seconds,node_cpu_seconds,gc_pause_seconds,note";
    }

    String csv() {
        return String.join(",", loader, Integer.toString(sessions), Integer.toString(batch), Integer.toString(workers),
                String.format(Locale.ROOT, "%.2f", seconds),
                String.format(Locale.ROOT, "%.2f", fromReadySeconds),
                String.format(Locale.ROOT, "%.0f", sessionsPerSecond()),
                Long.toString(peakHeapMiB), Long.toString(liveHeapMiB),
                String.format(Locale.ROOT, "%.2f", dbSeconds),
                String.format(Locale.ROOT, "%.2f", dbCpuSeconds),
                String.format(Locale.ROOT, "%.2f", nodeCpuSeconds),
                String.format(Locale.ROOT, "%.2f", gcPauseSeconds), note);
    }
}
