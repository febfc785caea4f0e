package dev.offlinepreload.benchmark;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.awaitility.Awaitility.await;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Phase {@code planning}: what planning costs when the database holds many more offline sessions than the node's
 * caches take. One node whose offline caches hold {@code --planning-max-count} entries (the node keeps that less the
 * 10% headroom), the same seeded data grown to each of {@code --planning-sizes} (default 1M and 10M, seeded in SQL).
 * Per size:
 * <ol>
 *   <li>the full key scan a node runs on every topology change (the provider's keys() query: every offline session
 *       id in key order), from the benchmark over JDBC like the provider (fetch size 10,000), best of 3, and its plan
 *       with {@code EXPLAIN (ANALYZE, BUFFERS)}; the plan of the candidates() query (ids with their last refresh);</li>
 *   <li>a timed start: the planning time between the provider's DEBUG line "planning for cluster topology" and its
 *       start line of the load, PostgreSQL's execution time of the planning's queries, the heap after each collection
 *       in that window; the load is capped at 1 session/s, so the node is idle after planning and its next periodic
 *       full collection gives the live heap with the plan held;</li>
 *   <li>a sampled start: the same, with a SIGQUIT about every second while the node plans ({@code
 *       -XX:+PrintClassHistogram}: a full collection and a histogram of the live objects), and one after planning;
 *       the largest live heap sampled and the planner's objects by class, against the histogram of a node with
 *       nothing loaded.</li>
 * </ol>
 */
final class PlanningScale {

    /** SessionQueries.keys() and candidates() as the provider sends them (parameters written out for EXPLAIN). */
    static final String KEYS_SQL = "SELECT USER_SESSION_ID FROM OFFLINE_USER_SESSION WHERE OFFLINE_FLAG = '1' ORDER BY USER_SESSION_ID";
    static final String CANDIDATES_SQL = "SELECT USER_SESSION_ID, LAST_SESSION_REFRESH, REALM_ID FROM OFFLINE_USER_SESSION"
            + " WHERE OFFLINE_FLAG = '1' AND LAST_SESSION_REFRESH >= 0 ORDER BY USER_SESSION_ID";
    /** pg_stat_statements' normalised text of the provider's statements. */
    private static final String KEYS_STATEMENT = "%SELECT USER_SESSION_ID FROM OFFLINE_USER_SESSION WHERE OFFLINE_FLAG = $1 ORDER BY USER_SESSION_ID";
    private static final String CANDIDATES_STATEMENT = "%SELECT USER_SESSION_ID, LAST_SESSION_REFRESH, REALM_ID FROM OFFLINE_USER_SESSION%";
    private static final String COUNT_STATEMENTS = "%SELECT COUNT(%";

    private static final String RANKED = "dev.offlinepreload.plan.LoadPlanner$Ranked";
    private static final String CANDIDATE = "dev.offlinepreload.plan.Candidate";
    private static final Duration SAMPLE_GAP = Duration.ofSeconds(1);
    private static final Duration PLANNING_TIMEOUT = Duration.ofMinutes(30);
    /**
     * A fresh node's live heap grows for about half a minute after startup (Keycloak warming up); planning would
     * start in the middle of it. The gate waits this long for a second node that never comes, then plans with one:
     * the node is idle and warmed up by then, its live heap right before planning the baseline.
     */
    private static final Duration WARM_UP = Duration.ofSeconds(60);
    private static final String GATE_WAITS = "waits for 2 nodes";
    private static final Pattern EXECUTION_TIME = Pattern.compile("Execution Time: ([0-9.]+) ms");

    /** What one size measured; -1 where a figure could not be read. */
    record Result(int sessions, long timedBaselineBytes, long sampledBaselineBytes, PlanningLog.Histogram baselineHistogram,
                  PlanningLog.Plan plan,
                  double planningSeconds, double keysDbSeconds, long keysDbCalls, double candidatesDbSeconds, long candidatesDbCalls, double countDbSeconds, long peakAfterGcBytes,
                  int gcPauses, long liveAfterPlanningBytes, double sampledPlanningSeconds, int samples,
                  long sampledPeakLiveBytes, PlanningLog.Histogram peakHistogram, long sampledRetainedLiveBytes,
                  double keyScanSeconds, double keyScanServerSeconds, String keyScanPlan, String candidatesPlan) {
    }

    private final Settings settings;
    private final List<Result> results = new ArrayList<>();

    PlanningScale(Settings settings) {
        this.settings = settings;
    }

    List<Result> results() {
        return results;
    }

    void run() {
        int maxCount = settings.planningMaxCount();
        try (KeycloakCluster cluster = KeycloakCluster.builder("benchmark-planning").nodes(1).pgStatStatements()
                .sharedBuffers(settings.sharedBuffers())
                .env("JAVA_OPTS_APPEND", LoaderComparison.heapFlags(settings.heap()) + " -XX:+PrintClassHistogram")
                .env("KC_LOG_LEVEL", "INFO,dev.offlinepreload.PreloadCoordinator:debug")
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", Integer.toString(maxCount))
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", Integer.toString(maxCount))
                .env(optionEnv("max-sessions-per-second"), "1") // after planning the node idles: its live heap holds the plan
                .env(optionEnv("expected-cluster-size"), "2")
                .env(optionEnv("join-timeout-seconds"), Long.toString(WARM_UP.toSeconds()))
                .build().start()) {
            KeycloakNode node = cluster.node(1);
            Database db = new Database(cluster);
            Seeding seeding = new Seeding(cluster, node);

            for (int size : settings.planningSizes()) {
                long seedStart = System.nanoTime();
                seeding.upTo(size, db);
                long settleStart = System.nanoTime();
                db.settle();
                Progress.say("planning: %d sessions seeded, VACUUM ANALYZE and CHECKPOINT in %.1f s (seeding and settling %.1f min)",
                        size, (System.nanoTime() - settleStart) / 1e9, (System.nanoTime() - seedStart) / 60e9);
                Progress.say("planning: session tables %s", db.sessionTableSizes());
                results.add(measure(node, db, size));
            }
        }
        print();
    }

    private Result measure(KeycloakNode node, Database db, int size) {
        // 1. The full key scan, from here.
        List<String> keysPlan = db.explain("EXPLAIN (ANALYZE, BUFFERS) " + KEYS_SQL);
        keysPlan.forEach(line -> Progress.say("planning: keys() plan: %s", line));
        List<String> candidatesPlan = db.explain("EXPLAIN " + CANDIDATES_SQL);
        candidatesPlan.forEach(line -> Progress.say("planning: candidates() plan: %s", line));
        double best = Double.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            Database.Scan scan = db.scan(KEYS_SQL);
            Progress.say("planning: full key scan over JDBC (fetch size 10,000): %d ids in %.2f s", scan.rows(), scan.seconds());
            best = Math.min(best, scan.seconds());
        }

        // 2. The timed start: the live heap of the idle node before planning (its last periodic full collection) is
        // what the planning's heap is measured against.
        db.resetStatements();
        node.restart();
        PlanningLog.Window window = awaitPlanned(node);
        List<String> lines = node.log().linesSinceStart();
        Progress.say("planning: %s", lines.get(window.from()));
        Progress.say("planning: %s", lines.get(window.to()));
        long timedBaseline = PlanningLog.lastPeriodicLiveBefore(lines, window.from());
        GcLog.Window gc = awaitLiveAfter(node, window);
        db.topStatements(6).forEach(line -> Progress.say("planning: db %s", line));
        double keysDb = db.statementSeconds(KEYS_STATEMENT);
        long keysCalls = db.statementCalls(KEYS_STATEMENT);
        double candidatesDb = db.statementSeconds(CANDIDATES_STATEMENT);
        long candidatesCalls = db.statementCalls(CANDIDATES_STATEMENT);
        double countDb = db.statementSeconds(COUNT_STATEMENTS);
        Progress.say("planning: %d sessions: planned in %.1f s (%s); live before planning %s; heap after GC in planning at "
                        + "most %d MiB over %d pauses; live after planning %s", size, window.seconds(), window.plan(),
                mib(timedBaseline), gc.peakAfterGcBytes() >> 20, gc.pauses(),
                gc.liveAfterBytes() == null ? "not read" : (gc.liveAfterBytes() >> 20) + " MiB");

        // 3. The sampled start: a histogram of the idle node shortly before the gate lets planning start, then one
        // about every second while it plans, and one after.
        node.stopGracefully();
        var started = node.startInBackground();
        await("the gate waits").atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(250))
                .until(() -> node.log().linesSinceStart().stream().anyMatch(l -> l.contains(GATE_WAITS)));
        RefreshLatency.sleep(WARM_UP.minusSeconds(15));
        Optional<PlanningLog.Histogram> before = sample(node);
        List<Long> beforeLive = PlanningLog.inspectionLiveBytes(node.log().linesSinceStart());
        long sampledBaseline = before.isPresent() && !beforeLive.isEmpty() ? beforeLive.get(beforeLive.size() - 1) : -1;
        await("planning starts").atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(100))
                .until(() -> node.log().linesSinceStart().stream().anyMatch(l -> PlanningLog.STARTED.matcher(l).find()));
        int samples = 0;
        while (PlanningLog.window(node.log().linesSinceStart()).isEmpty()) {
            if (sample(node).isPresent()) {
                samples++;
            }
            RefreshLatency.sleep(SAMPLE_GAP);
        }
        PlanningLog.Window sampledWindow = PlanningLog.window(node.log().linesSinceStart()).orElseThrow();
        RefreshLatency.sleep(Duration.ofSeconds(3)); // the first batch, then the node idles
        Optional<PlanningLog.Histogram> retained = sample(node);
        started.join();
        List<String> sampled = node.log().linesSinceStart();
        List<String> during = sampled.subList(sampledWindow.from(), sampledWindow.to() + 1);
        List<Long> liveDuring = PlanningLog.inspectionLiveBytes(during);
        List<PlanningLog.Histogram> histograms = PlanningLog.histograms(during);
        List<Long> liveAll = PlanningLog.inspectionLiveBytes(sampled);
        long retainedLive = retained.isPresent() && !liveAll.isEmpty() ? liveAll.get(liveAll.size() - 1) : -1;
        long peakLive = liveDuring.stream().mapToLong(Long::longValue).max().orElse(-1);
        PlanningLog.Histogram peakHistogram = histograms.stream().max((x, y) -> Long.compare(x.bytes(), y.bytes())).orElse(null);
        PlanningLog.Histogram baseline = before.orElse(null);
        Progress.say("planning: %d sessions, sampled start: live before planning %s; planned in %.1f s with %d samples; "
                        + "largest live heap sampled %s, after planning %s", size, mib(sampledBaseline), sampledWindow.seconds(),
                samples, mib(peakLive), mib(retainedLive));
        if (peakHistogram != null) {
            Progress.say("planning: at the largest sample: %s", describe(peakHistogram, baseline));
        }
        retained.ifPresent(h -> Progress.say("planning: after planning: %s", describe(h, baseline)));

        Result result = new Result(size, timedBaseline, sampledBaseline, baseline, window.plan(), window.seconds(), keysDb,
                keysCalls, candidatesDb, candidatesCalls, countDb, gc.peakAfterGcBytes(), gc.pauses(),
                gc.liveAfterBytes() == null ? -1 : gc.liveAfterBytes(), sampledWindow.seconds(), samples, peakLive,
                peakHistogram, retainedLive, best, serverSeconds(keysPlan), String.join(" / ", keysPlan),
                String.join(" / ", candidatesPlan));
        node.stopGracefully(); // the load crawls at 1 session/s; the next size starts its own node
        return result;
    }

    /** The live objects of the planner and the id strings, against the histogram of the idle node before planning. */
    private static String describe(PlanningLog.Histogram h, PlanningLog.Histogram baselineHistogram) {
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "%.1f MiB live in %d objects; %s %d (%d bytes), %s %d (%d bytes)",
                h.bytes() / 1048576.0, h.instances(), "LoadPlanner$Ranked", h.row(RANKED).instances(), h.row(RANKED).bytes(),
                "Candidate", h.row(CANDIDATE).instances(), h.row(CANDIDATE).bytes()));
        if (baselineHistogram != null) {
            for (String type : List.of("java.lang.String", "[B", "[Ljava.lang.Object;")) {
                s.append(String.format(Locale.ROOT, ", %s +%d (+%d bytes)", type,
                        h.row(type).instances() - baselineHistogram.row(type).instances(),
                        h.row(type).bytes() - baselineHistogram.row(type).bytes()));
            }
            s.append(String.format(Locale.ROOT, "; all classes +%.1f MiB over the idle node before planning",
                    (h.bytes() - baselineHistogram.bytes()) / 1048576.0));
            if (h.row(RANKED).instances() > 0) {
                s.append(String.format(Locale.ROOT, "; the planner's classes %d bytes per Ranked",
                        plannerBytes(h, baselineHistogram) / h.row(RANKED).instances()));
            }
        }
        return s.toString();
    }

    /**
     * The planner's objects in a histogram: its own records, and the strings, byte arrays and object arrays more than
     * the node with preloading off holds (the ids, the queue's and the lists' arrays). -1 without both histograms.
     */
    static long plannerBytes(PlanningLog.Histogram h, PlanningLog.Histogram baseline) {
        if (h == null || baseline == null) {
            return -1;
        }
        long bytes = h.row(RANKED).bytes() + h.row(CANDIDATE).bytes();
        for (String type : List.of("java.lang.String", "[B", "[Ljava.lang.Object;")) {
            bytes += h.row(type).bytes() - baseline.row(type).bytes();
        }
        return bytes;
    }

    /**
     * SIGQUIT to the node's JVM (kc.sh starts it as a child, not as PID 1): a thread dump, then, with
     * PrintClassHistogram, a full collection and a class histogram on stdout. Waits for the histogram; empty if none
     * came within 60 s.
     */
    private static Optional<PlanningLog.Histogram> sample(KeycloakNode node) {
        int before = PlanningLog.histogramCount(node.log().linesSinceStart());
        try {
            node.threadDump();
        } catch (UncheckedIOException e) {
            return Optional.empty();
        }
        try {
            await("class histogram").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> PlanningLog.histogramCount(node.log().linesSinceStart()) > before);
        } catch (ConditionTimeoutException e) {
            return Optional.empty();
        }
        List<PlanningLog.Histogram> all = PlanningLog.histograms(node.log().linesSinceStart());
        return Optional.of(all.get(all.size() - 1));
    }

    private static PlanningLog.Window awaitPlanned(KeycloakNode node) {
        return await("planning done").atMost(PLANNING_TIMEOUT).pollInterval(Duration.ofMillis(200))
                .until(() -> PlanningLog.window(node.log().linesSinceStart()), Optional::isPresent).orElseThrow();
    }

    /** The GC window of the planning, with the live heap of the first periodic full collection after it. */
    private static GcLog.Window awaitLiveAfter(KeycloakNode node, PlanningLog.Window window) {
        try {
            return await("periodic full GC after planning").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
                    .until(() -> gcWindow(node.log().linesSinceStart(), window), w -> w.liveAfterBytes() != null);
        } catch (ConditionTimeoutException e) {
            return gcWindow(node.log().linesSinceStart(), window);
        }
    }

    private static GcLog.Window gcWindow(List<String> lines, PlanningLog.Window window) {
        String from = lines.get(window.from());
        String to = lines.get(window.to());
        return GcLog.window(lines, l -> l.equals(from), l -> l.equals(to));
    }

    /** "Execution Time: 1234.567 ms" of an EXPLAIN ANALYZE, in seconds, or -1. */
    static double serverSeconds(List<String> plan) {
        for (String line : plan) {
            Matcher m = EXECUTION_TIME.matcher(line);
            if (m.find()) {
                return Double.parseDouble(m.group(1)) / 1000;
            }
        }
        return -1;
    }

    private void print() {
        Progress.say("planning: the figures (one node, offline caches' max-count %,d: it keeps that less the 10%% headroom)",
                settings.planningMaxCount());
        for (String line : table(results)) {
            Progress.say("planning: %s", line);
        }
    }

    /** The table of the figures, one column per size (markdown). */
    static List<String> table(List<Result> results) {
        List<String> lines = new ArrayList<>();
        StringBuilder header = new StringBuilder("| |");
        StringBuilder rule = new StringBuilder("|---|");
        for (Result r : results) {
            header.append(String.format(Locale.ROOT, " %s sessions |", label(r.sessions())));
            rule.append("---|");
        }
        lines.add(header.toString());
        lines.add(rule.toString());
        lines.add(row(results, "sessions kept by the node (owned within its limit)", r -> String.format(Locale.ROOT, "%,d", r.plan().kept())));
        lines.add(row(results, "planning time (DEBUG line to the load's start line)", r -> seconds(r.planningSeconds())));
        lines.add(row(results, "  of which PostgreSQL: keys() / candidates() / counts (execution time)", r -> String.format(Locale.ROOT,
                "%.1f / %.1f / %.1f s", r.keysDbSeconds(), r.candidatesDbSeconds(), r.countDbSeconds())));
        lines.add(row(results, "live heap before planning, node idle and warmed up (periodic full GC)", r -> mib(r.timedBaselineBytes())));
        lines.add(row(results, "heap after GC during planning, highest (over the live heap before)", r -> r.peakAfterGcBytes() <= 0
                || r.timedBaselineBytes() <= 0 ? "–" : String.format(Locale.ROOT, "%d MiB (+%d MiB, %d pauses)",
                r.peakAfterGcBytes() >> 20, (r.peakAfterGcBytes() - r.timedBaselineBytes()) >> 20, r.gcPauses())));
        lines.add(row(results, "live heap after planning, the plan held (over the live heap before)", r -> r.liveAfterPlanningBytes() <= 0
                || r.timedBaselineBytes() <= 0 ? "–" : String.format(Locale.ROOT, "%d MiB (+%d MiB)", r.liveAfterPlanningBytes() >> 20,
                (r.liveAfterPlanningBytes() - r.timedBaselineBytes()) >> 20)));
        lines.add(row(results, "  per session kept", r -> perKept(r.liveAfterPlanningBytes() - r.timedBaselineBytes(), r)));
        lines.add(row(results, "sampled start: live heap before planning (heap inspection)", r -> mib(r.sampledBaselineBytes())));
        lines.add(row(results, "  largest live heap sampled during planning (over the live heap before)", r -> r.sampledPeakLiveBytes() <= 0
                || r.sampledBaselineBytes() <= 0 ? "–" : String.format(Locale.ROOT, "%d MiB (+%d MiB, %d samples)",
                r.sampledPeakLiveBytes() >> 20, (r.sampledPeakLiveBytes() - r.sampledBaselineBytes()) >> 20, r.samples())));
        lines.add(row(results, "  per session kept", r -> perKept(r.sampledPeakLiveBytes() - r.sampledBaselineBytes(), r)));
        lines.add(row(results, "  planner's objects at that sample: Ranked, Candidate", r -> r.peakHistogram() == null ? "–"
                : String.format(Locale.ROOT, "%,d, %,d", r.peakHistogram().row(RANKED).instances(), r.peakHistogram().row(CANDIDATE).instances())));
        lines.add(row(results, "  their bytes with the strings, byte[] and Object[] over the live heap before, per Ranked", r -> {
            long bytes = plannerBytes(r.peakHistogram(), r.baselineHistogram());
            long ranked = r.peakHistogram() == null ? 0 : r.peakHistogram().row(RANKED).instances();
            return bytes <= 0 || ranked == 0 ? "–" : String.format(Locale.ROOT, "%.0f bytes (%.0f MiB per 1M)",
                    (double) bytes / ranked, (double) bytes / ranked * 1_000_000 / 1048576);
        }));
        lines.add(row(results, "  live heap after planning, the plan held (over the live heap before)", r -> r.sampledRetainedLiveBytes() <= 0
                || r.sampledBaselineBytes() <= 0 ? "–" : String.format(Locale.ROOT, "%d MiB (+%d MiB)", r.sampledRetainedLiveBytes() >> 20,
                (r.sampledRetainedLiveBytes() - r.sampledBaselineBytes()) >> 20)));
        lines.add(row(results, "  per session kept", r -> perKept(r.sampledRetainedLiveBytes() - r.sampledBaselineBytes(), r)));
        lines.add(row(results, "full key scan, JDBC stream like the provider's (best of 3)", r -> seconds(r.keyScanSeconds())));
        lines.add(row(results, "full key scan, PostgreSQL alone (EXPLAIN ANALYZE)", r -> seconds(r.keyScanServerSeconds())));
        return lines;
    }

    private static String perKept(long bytes, Result r) {
        if (bytes <= 0 || r.plan().kept() <= 0) {
            return "–";
        }
        double perSession = (double) bytes / r.plan().kept();
        return String.format(Locale.ROOT, "%.0f bytes (%.0f MiB per 1M kept)", perSession, perSession * 1_000_000 / 1048576);
    }

    private static String row(List<Result> results, String name, Function<Result, String> cell) {
        StringBuilder s = new StringBuilder("| ").append(name).append(" |");
        for (Result r : results) {
            s.append(' ').append(cell.apply(r)).append(" |");
        }
        return s.toString();
    }

    private static String seconds(double s) {
        return s < 0 ? "–" : String.format(Locale.ROOT, "%.1f s", s);
    }

    private static String mib(long bytes) {
        return bytes < 0 ? "–" : (bytes >> 20) + " MiB";
    }

    static String label(int sessions) {
        return sessions % 1_000_000 == 0 ? sessions / 1_000_000 + "M" : sessions % 1000 == 0 ? sessions / 1000 + "k"
                : Integer.toString(sessions);
    }
}
