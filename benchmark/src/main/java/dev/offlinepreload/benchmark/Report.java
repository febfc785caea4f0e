package dev.offlinepreload.benchmark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

import com.sun.management.OperatingSystemMXBean;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** Writes results.md, runs.csv and the PNG charts into the results folder. */
final class Report {

    /** The provider's default batch size; BenchmarkDefaultsTest keeps it equal to PreloadOption.BATCH_SIZE. */
    static final int DEFAULT_BATCH = 1000;

    /** The provider's default workers on this machine's CPUs (the provider is not on the benchmark's classpath). */
    static int defaultWorkers() {
        return 2 * cpus();
    }

    private static final String OURS = LoadResult.OURS;
    private static final String KC24 = LoadResult.KC24;
    private static final String RAW = LoadResult.RAW;

    private final Settings settings;
    private final String command;
    private final List<LoadResult> loads;
    private final long ourBaselineMiB;
    private final List<RefreshLatency.Pass> passes;
    private final List<RefreshLatency.Formation> formations;
    private final StringBuilder md = new StringBuilder();
    /** The note of the defaults' load with adaptive-load=false. */
    static final String UNGOVERNED = "adaptive-load=false";
    /** The ratio of the defaults' time after ready to adaptive-load=false's that #32 allows with no traffic. */
    private static final double NO_TRAFFIC_TARGET = 1.2;

    /** The note of a load of no-traffic pair {@code pair} (2 or more; pair 1 is the defaults' load and {@link #UNGOVERNED}). */
    static String pairNote(int pair, boolean adaptive) {
        return (adaptive ? "" : UNGOVERNED + ", ") + "no-traffic pair " + pair;
    }

    /** Whether no-traffic pair {@code pair} loads at the defaults first: pair 1, 3, …; 2, 4, … the other way round. */
    static boolean defaultsFirst(int pair) {
        return pair % 2 == 1;
    }

    Report(Settings settings, String command, List<LoadResult> loads, long ourBaselineMiB,
           List<RefreshLatency.Pass> passes, List<RefreshLatency.Formation> formations) {
        this.settings = settings;
        this.command = command;
        this.loads = loads;
        this.ourBaselineMiB = ourBaselineMiB;
        this.passes = passes;
        this.formations = formations;
    }

    void write() {
        Path out = settings.out();
        try {
            Files.createDirectories(out);
            Files.write(out.resolve("runs.csv"), (LoadResult.csvHeader() + "\n"
                    + loads.stream().map(LoadResult::csv).collect(Collectors.joining("\n")) + "\n").getBytes());
            header();
            if (!loads.isEmpty()) {
                summary();
                perMinor();
                noTrafficPairs();
                severalClientSessions();
                matrix(OURS, "This provider, one node: every batch size and worker count");
                matrix(KC24, "Keycloak 24.0.5's built-in preloader, one node (batch = sessionsPerSegment)");
                memory();
                for (int size : settings.sizes()) {
                    loadChart(size, out);
                }
                heapChart(out);
            }
            if (!passes.isEmpty()) {
                refresh(out);
            }
            if (!formations.isEmpty()) {
                formation();
            }
            Files.writeString(out.resolve("results.md"), md.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the results to " + out, e);
        }
    }

    private void header() {
        Runtime rt = Runtime.getRuntime();
        md.append("# Benchmark results\n\n")
                .append("Command: `").append(command).append("`  \n")
                .append(String.format(Locale.ROOT, "Machine: %d CPUs, %.0f GiB RAM, %s %s; Docker, PostgreSQL and "
                                + "the Keycloak nodes share it; PostgreSQL 15 with shared_buffers=%s. Finished %s.%n%n",
                        rt.availableProcessors(), totalMemoryGiB(), System.getProperty("os.name"),
                        System.getProperty("os.arch"), settings.sharedBuffers(), LocalDateTime.now().withNano(0)));
    }

    private void summary() {
        List<Integer> sizes = settings.sizes();
        md.append("## Loading offline sessions into an empty cache, one node\n\n");
        md.append("| loader | ").append(sizes.stream().map(s -> sessionsLabel(s)).collect(Collectors.joining(" | ")))
                .append(" | sessions/s at ").append(sessionsLabel(largest())).append(" |\n|---|")
                .append("---|".repeat(sizes.size())).append("---|\n");
        row("this provider, defaults (batch " + DEFAULT_BATCH + ", workers " + defaultWorkers() + ")", s -> ourDefault(s));
        row("this provider, best setting", s -> best(OURS, s));
        row("Keycloak 24.0.5, sessionsPerSegment 64 (its default)", s -> at(KC24, s, 64));
        row("Keycloak 24.0.5, its best sessionsPerSegment", s -> best(KC24, s));
        row("raw JDBC read of the same rows (the physical limit)", s -> best(RAW, s));
        md.append("\n| ratio | ").append(sizes.stream().map(Report::sessionsLabel).collect(Collectors.joining(" | ")))
                .append(" |\n|---|").append("---|".repeat(sizes.size())).append("\n");
        ratio("Keycloak 24 default / this provider (how many times faster)", s -> at(KC24, s, 64), s -> ourDefault(s));
        ratio("Keycloak 24 best / this provider", s -> best(KC24, s), s -> ourDefault(s));
        ratio("this provider / raw read (how many times the physical limit)", s -> ourDefault(s), s -> best(RAW, s));
        loads.stream().filter(r -> r.loader().equals(OURS) && r.note().equals(UNGOVERNED)).findFirst().ifPresent(u -> {
            LoadResult governed = ourDefault(u.sessions());
            if (governed != null && u.fromReadySeconds() > 0 && governed.fromReadySeconds() > 0) {
                md.append(String.format(Locale.ROOT, "%nWith no traffic, %s at the defaults (adaptive-load on) was loaded "
                                + "%.1f s after the node was ready (its pass %.1f s); the same load with adaptive-load=false "
                                + "%.1f s after (its pass %.1f s): %.2f×. With persistent sessions the defaults' first pass "
                                + "waits for the quiet start (quiet-start-seconds without a request once every node has "
                                + "started), which the pass's own time leaves out.%n", sessionsLabel(u.sessions()),
                        governed.fromReadySeconds(), governed.seconds(), u.fromReadySeconds(), u.seconds(), governed.fromReadySeconds() / u.fromReadySeconds()));
            }
        });
        md.append("\n| database per load: statements' execution time / the database's CPU | ")
                .append(sizes.stream().map(Report::sessionsLabel).collect(Collectors.joining(" | ")))
                .append(" |\n|---|").append("---|".repeat(sizes.size())).append("\n");
        dbRow("this provider, defaults", s -> ourDefault(s));
        dbRow("Keycloak 24.0.5, its best sessionsPerSegment", s -> best(KC24, s));
        dbRow("raw JDBC read (the read's own time / the database's CPU)", s -> best(RAW, s));
        md.append("\n| CPU per load: the node's + the database's = the machine's work | ")
                .append(sizes.stream().map(Report::sessionsLabel).collect(Collectors.joining(" | ")))
                .append(" |\n|---|").append("---|".repeat(sizes.size())).append("\n");
        cpuRow("this provider, defaults", s -> ourDefault(s));
        cpuRow("Keycloak 24.0.5, its best sessionsPerSegment", s -> best(KC24, s));
        md.append("\nTimes are wall-clock seconds for the whole pass: for this provider from the start of its pass "
                + "(planning included) to its \"finished\" line, for Keycloak 24 between its \"Start pre-loading\" and "
                + "\"Pre-loading ... finished\" lines. Each run starts a fresh node (empty cache, cold JVM) on the same "
                + "data; PostgreSQL's cache is warm. The database's execution time (`pg_stat_statements`, statements on "
                + "the session tables) counts a statement's waiting too, for a CPU on this shared machine or for the "
                + "client to take its rows; its CPU is the database container's (cgroup) from the node's start to the "
                + "end of the load, Keycloak's own startup queries included. The node's CPU is its container's (cgroup) "
                + "from its start to the end of the load, less what a start of the same loader's node with nothing to "
                + "load took: the load's work on the node (the loader, the collector, the JIT compiler). Seconds over "
                + "the wall-clock time = the cores a load keeps busy; on " + cpus() + " cores a load cannot take less "
                + "wall-clock time than its machine's work divided by " + cpus() + ".\n\n");
    }

    /**
     * The largest size on one node at the defaults and with adaptive-load=false, on the project's Keycloak and on each
     * of {@code --other-minors}: each version on a database of its own, seeded alike, in this run.
     */
    private void perMinor() {
        List<String> others = otherVersions();
        if (others.isEmpty()) {
            return;
        }
        int size = largest();
        md.append("## ").append(sessionsLabel(size)).append(" sessions on one node, per Keycloak version\n\n")
                .append("| Keycloak | defaults (s after ready) | adaptive-load=false (s after ready) | defaults / adaptive-load=false | node CPU (s) "
                        + "| DB CPU (s) | live heap after (MiB) |\n|---|---|---|---|---|---|---|\n");
        minorRow(System.getProperty("offlinepreload.projectKeycloakVersion", "the project's") + " (the project's)", OURS, size);
        others.forEach(version -> minorRow(version, LoadResult.oursOn(version), size));
        md.append("\nSeconds from Keycloak's \"started\" line to the end of the load (the defaults' quiet start "
                + "included). Node and database CPU and heap of the load at the defaults. Each version runs on a node and a "
                + "PostgreSQL of its own with the same seeded data (the project's is the run above).\n\n");
    }

    private void minorRow(String version, String loader, int size) {
        LoadResult defaults = loads.stream().filter(r -> r.loader().equals(loader) && r.sessions() == size
                && r.batch() == DEFAULT_BATCH && r.workers() == defaultWorkers() && r.note().isEmpty()).findFirst().orElse(null);
        LoadResult uncapped = loads.stream().filter(r -> r.loader().equals(loader) && r.sessions() == size
                && r.note().equals(UNGOVERNED)).findFirst().orElse(null);
        md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", version, fromReady(defaults), fromReady(uncapped),
                defaults != null && uncapped != null && defaults.fromReadySeconds() > 0 && uncapped.fromReadySeconds() > 0
                        ? String.format(Locale.ROOT, "%.2f×", defaults.fromReadySeconds() / uncapped.fromReadySeconds()) : "-",
                defaults == null ? "-" : cpu(defaults.nodeCpuSeconds()), defaults == null ? "-" : cpu(defaults.dbCpuSeconds()),
                defaults == null ? "-" : mib(defaults.liveHeapMiB())));
    }

    /**
     * With {@code --no-traffic-pairs} above 1: every pair of the defaults and adaptive-load=false on each version, in the
     * order they ran, and what they say together.
     */
    private void noTrafficPairs() {
        if (settings.noTrafficPairs() < 2) {
            return;
        }
        int size = largest();
        md.append("## With no traffic, ").append(sessionsLabel(size)).append(" on one node: ")
                .append(settings.noTrafficPairs()).append(" pairs of the defaults and adaptive-load=false\n\n")
                .append("| Keycloak | pair | first | defaults: s after ready (waited, pass, node CPU) "
                        + "| adaptive-load=false: s after ready (waited, pass, node CPU) | defaults / adaptive-load=false |\n"
                        + "|---|---|---|---|---|---|\n");
        List<String> versions = new ArrayList<>();
        versions.add(null); // the project's
        versions.addAll(otherVersions());
        StringBuilder verdicts = new StringBuilder();
        for (String other : versions) {
            String loader = other == null ? OURS : LoadResult.oursOn(other);
            String version = other == null ? System.getProperty("offlinepreload.projectKeycloakVersion", "the project's") : other;
            List<Double> ratios = new ArrayList<>();
            List<Double> waits = new ArrayList<>();
            List<Double> passes = new ArrayList<>();
            for (int pair = 1; pair <= settings.noTrafficPairs(); pair++) {
                LoadResult defaults = pairLoad(loader, size, pair, true);
                LoadResult uncapped = pairLoad(loader, size, pair, false);
                if (defaults == null || uncapped == null || defaults.fromReadySeconds() <= 0 || uncapped.fromReadySeconds() <= 0) {
                    md.append(String.format(Locale.ROOT, "| %s | %d | | %s | %s | - |%n", version, pair, pairCell(defaults),
                            pairCell(uncapped)));
                    continue;
                }
                double ratio = defaults.fromReadySeconds() / uncapped.fromReadySeconds();
                ratios.add(ratio);
                waits.add(waited(defaults) - waited(uncapped));
                passes.add(defaults.seconds() - uncapped.seconds());
                md.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %.2f× |%n", version, pair,
                        defaultsFirst(pair) ? "defaults" : "adaptive-load=false", pairCell(defaults), pairCell(uncapped), ratio));
            }
            if (!ratios.isEmpty()) {
                verdicts.append(String.format(Locale.ROOT, "- %s: median %.2f× (%s×), at most %.1f× in %d of %d pairs; "
                                + "the defaults waited %+.1f s longer after ready (median; %s s) and their pass took %+.1f s "
                                + "longer (median; %s s).%n", version, RestartWindow.median(ratios), range(ratios, "%.2f", "–"),
                        NO_TRAFFIC_TARGET, ratios.stream().filter(r -> r <= NO_TRAFFIC_TARGET).count(), ratios.size(),
                        RestartWindow.median(waits), range(waits, "%+.1f", " to "), RestartWindow.median(passes),
                        range(passes, "%+.1f", " to ")));
            }
        }
        md.append("\n").append(verdicts).append("\nSeconds from Keycloak's \"started\" line to the end of the load; "
                + "waited: from that line to the start of the pass (the quiet start and, on Keycloak 26.7, the seconds "
                + "before Keycloak runs the providers' postInit); pass: the pass's own time; node CPU as above. Pair 1 "
                + "is the pair of the tables above; each pair after it runs in the other order than the one before."
                + (settings.providerOptions().isEmpty() ? "" : " Every load of these pairs ran with " + settings.providerOptions()
                        .entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", "))
                        + " (--provider-options), the ones called \"defaults\" too.")
                + "\n\n");
    }

    /** A load of no-traffic pair {@code pair} of {@code loader}, the defaults ({@code adaptive}) or adaptive-load=false. */
    private LoadResult pairLoad(String loader, int size, int pair, boolean adaptive) {
        String note = pair == 1 ? (adaptive ? "" : UNGOVERNED) : pairNote(pair, adaptive);
        return loads.stream().filter(r -> r.loader().equals(loader) && r.sessions() == size && r.batch() == DEFAULT_BATCH
                && r.workers() == defaultWorkers() && r.note().equals(note)).findFirst().orElse(null);
    }

    private static String pairCell(LoadResult r) {
        return r == null || r.fromReadySeconds() <= 0 ? "-" : String.format(Locale.ROOT, "%.1f (%.1f, %.1f, %s)",
                r.fromReadySeconds(), waited(r), r.seconds(), cpu(r.nodeCpuSeconds()));
    }

    /** The other Keycloak versions this run loaded on ({@code --other-minors}), in the order they ran. */
    private List<String> otherVersions() {
        return loads.stream().map(LoadResult::otherKeycloakVersion).filter(Objects::nonNull).distinct().toList();
    }

    /** "lowest{between}highest" of {@code values}, each in {@code format}. */
    private static String range(List<Double> values, String format, String between) {
        return String.format(Locale.ROOT, format + between + format, values.stream().min(Double::compare).orElseThrow(),
                values.stream().max(Double::compare).orElseThrow());
    }

    /** Seconds from Keycloak's "started" line to the start of the pass. */
    private static double waited(LoadResult r) {
        return r.fromReadySeconds() - r.seconds();
    }

    private static String fromReady(LoadResult r) {
        return r == null || r.fromReadySeconds() <= 0 ? "-" : String.format(Locale.ROOT, "%.1f", r.fromReadySeconds());
    }

    /** The loads of the largest size with several client sessions per session (users with several apps). */
    private void severalClientSessions() {
        List<LoadResult> rows = loads.stream().filter(r -> r.note().endsWith("client sessions each")).toList();
        if (rows.isEmpty()) {
            return;
        }
        md.append("## ").append(sessionsLabel(rows.get(0).sessions())).append(" sessions with ")
                .append(rows.get(0).note()).append(", one node\n\n")
                .append("| loader | batch | seconds | sessions/s | peak heap after GC (MiB) | live heap after (MiB) | DB time (s) "
                        + "| DB CPU (s) | node CPU (s) | GC pauses (s) |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (LoadResult r : rows) {
            md.append(String.format(Locale.ROOT, "| %s | %d | %.1f | %,.0f | %s | %s | %.1f | %s | %s | %.1f |%n",
                    r.loader().equals(OURS) ? "this provider, defaults" : "Keycloak 24.0.5, its best sessionsPerSegment",
                    r.batch(), r.seconds(), r.sessionsPerSecond(), mib(r.peakHeapMiB()), mib(r.liveHeapMiB()),
                    r.dbSeconds(), cpu(r.dbCpuSeconds()), cpu(r.nodeCpuSeconds()), r.gcPauseSeconds()));
        }
        md.append("\nThe same data for both (seeded again for this row), an 8 GiB heap for both.\n\n");
    }

    private void matrix(String loader, String title) {
        List<LoadResult> rows = loads.stream().filter(r -> r.loader().equals(loader)).toList();
        if (rows.isEmpty()) {
            return;
        }
        md.append("## ").append(title).append("\n\n")
                .append("| sessions | batch | workers | seconds | sessions/s | peak heap after GC (MiB) | live heap after (MiB)"
                        + " | DB time (s) | DB CPU (s) | node CPU (s) | GC pauses (s) | note |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (LoadResult r : rows) {
            md.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %.1f | %s | %s | %.1f | %s |%n",
                    sessionsLabel(r.sessions()), r.batch(), r.workers() == 0 ? "-" : Integer.toString(r.workers()),
                    r.ok() || r.seconds() > 0 ? String.format(Locale.ROOT, "%.1f", r.seconds()) : "-",
                    r.seconds() > 0 ? String.format(Locale.ROOT, "%,.0f", r.sessionsPerSecond()) : "-",
                    mib(r.peakHeapMiB()), mib(r.liveHeapMiB()), r.dbSeconds(), cpu(r.dbCpuSeconds()), cpu(r.nodeCpuSeconds()),
                    r.gcPauseSeconds(), r.note()));
        }
        md.append("\n");
    }

    private void memory() {
        md.append("## Memory\n\n");
        md.append("Peak heap after GC = the most the JVM kept alive at any collection during the load (cached sessions "
                + "plus the batches in flight); live heap after = after a full GC once the node is idle. A node with "
                + "preloading switched off keeps ").append(ourBaselineMiB < 0 ? "(not read without G1's idle collection)"
                : ourBaselineMiB + " MiB").append(" alive.\n\n");
        loads.stream().filter(r -> r.loader().equals(OURS) && r.note().endsWith("MiB heap")).findFirst().ifPresent(c -> {
            LoadResult free = loads.stream().filter(r -> r.loader().equals(OURS) && r.sessions() == c.sessions()
                    && r.batch() == c.batch() && r.workers() == c.workers() && r.note().isEmpty()).findFirst().orElse(null);
            if (free != null) {
                md.append(String.format(Locale.ROOT, "Batch %d, %d workers, %s sessions: live heap %d MiB, of which "
                                + "%d MiB cached data (%.2f KiB per session with its client session); peak %d MiB, i.e. "
                                + "%d MiB above the live heap.%n%n",
                        c.batch(), c.workers(), sessionsLabel(c.sessions()), free.liveHeapMiB(),
                        free.liveHeapMiB() - ourBaselineMiB, (free.liveHeapMiB() - ourBaselineMiB) * 1024.0 / c.sessions(),
                        free.peakHeapMiB(), free.peakHeapMiB() - free.liveHeapMiB()));
            }
            md.append(String.format(Locale.ROOT, "The same load with the heap capped at that live heap + 256 MiB (%s): "
                            + "%s.%n", c.note(), c.ok() || c.note().endsWith("MiB heap") && c.seconds() > 0
                            ? String.format(Locale.ROOT, "completed in %.1f s, all %s sessions loaded", c.seconds(),
                            sessionsLabel(c.sessions())) : c.note()));
            loads.stream().filter(r -> r.loader().equals(KC24) && r.note().contains("MiB heap")).findFirst()
                    .ifPresent(k -> md.append(String.format(Locale.ROOT, "Keycloak 24 at sessionsPerSegment %d with "
                            + "the same cap: %s.%n", k.batch(), k.seconds() > 0
                            ? String.format(Locale.ROOT, "completed in %.1f s", k.seconds()) : k.note())));
            md.append("\n");
        });
    }

    private void refresh(Path out) throws IOException {
        md.append("## Refreshing offline tokens after a full restart of 3 nodes\n\n")
                .append(String.format(Locale.ROOT, "%d real offline tokens (password grant, one session each) among %s "
                        + "sessions; all 3 nodes stopped (SIGTERM) and started again; with this provider, refreshing starts "
                        + "once every node has loaded. A fresh JVM is slow on its first requests whatever its cache "
                        + "holds, so 1000 other tokens are refreshed first (cold JVM); then every measured token once "
                        + "(first refresh after the restart) and once more (steady state), %d at a time, round-robin "
                        + "over the nodes. With persistent sessions (26.7's default) every refresh reads and updates "
                        + "its rows in the database whether cached or not; what a warm cache saves is the lazy import "
                        + "(the cache misses column). The passes while 3 nodes load run with adaptive-load=false: "
                        + "refreshes back to back leave the defaults no quiet second to load in.%n%n",
                        settings.refreshTokens(), sessionsLabel(settings.refreshSessions()), 8))
                .append("| setup | pass | refreshes | failed | p50 (ms) | p99 (ms) | refreshes/s | session-table SELECTs "
                        + "per refresh | rows read per refresh | offlineSessions cache misses per refresh |\n"
                        + "|---|---|---|---|---|---|---|---|---|---|\n");
        for (RefreshLatency.Pass p : passes) {
            Latencies l = p.latencies();
            md.append(String.format(Locale.ROOT, "| %s | %s | %d | %d | %.1f | %.1f | %.0f | %s | %s | %s |%n", p.setup(),
                    p.when(), l.count(), l.failures(), l.percentile(50), l.percentile(99), l.perSecond(),
                    num(p.selectsPerRefresh()), num(p.rowsPerRefresh()), num(p.missesPerRefresh())));
        }
        md.append("\n");
        for (String setup : List.of(RefreshLatency.STOCK, RefreshLatency.OURS)) {
            Optional<RefreshLatency.Pass> first = pass(setup, "first refresh");
            Optional<RefreshLatency.Pass> steady = pass(setup, "steady");
            if (first.isPresent() && steady.isPresent()) {
                md.append(String.format(Locale.ROOT, "- %s: first-refresh p99 = %.2f × steady state%n", setup,
                        first.get().latencies().percentile(99) / steady.get().latencies().percentile(99)));
            }
        }
        for (String rate : List.of("", " at max-sessions-per-second=" + RefreshLatency.RATE_CAP)) {
            Optional<RefreshLatency.Pass> during = passes.stream().filter(p -> p.setup().equals(RefreshLatency.OURS)
                    && p.when().startsWith("while") && p.when().endsWith("sessions" + rate)).findFirst();
            Optional<RefreshLatency.Pass> idle = pass(RefreshLatency.OURS, "right after that load" + rate + " (idle)");
            if (during.isPresent() && idle.isPresent()) {
                md.append(String.format(Locale.ROOT, "- %s: p99 while loading%s = %.2f × p99 right after%n", RefreshLatency.OURS,
                        rate, during.get().latencies().percentile(99) / idle.get().latencies().percentile(99)));
            }
        }
        md.append("\n![refresh latency](refresh-latency.png)\n\n");

        CategoryChart chart = new CategoryChartBuilder().width(1000).height(520)
                .title("Offline token refresh latency, 3 nodes after a full restart").yAxisTitle("ms").build();
        List<String> labels = new ArrayList<>();
        List<Double> p50 = new ArrayList<>();
        List<Double> p99 = new ArrayList<>();
        for (RefreshLatency.Pass p : passes) {
            labels.add((p.setup().equals(RefreshLatency.STOCK) ? "stock: " : "provider: ") + p.when().replaceAll(" \\(.*", "")
                    .replaceAll("first \\d+ refreshes", "cold JVM")
                    .replace("first refresh after a full restart", "first").replace("second refresh", "second")
                    .replaceAll("while \\d+ nodes load [^ ]+ sessions", "while loading").replace("right after that load", "after load")
                    .replace(" at max-sessions-per-second=", ", cap "));
            p50.add(p.latencies().percentile(50));
            p99.add(p.latencies().percentile(99));
        }
        chart.addSeries("p50", labels, p50);
        chart.addSeries("p99", labels, p99);
        chart.getStyler().setXAxisLabelRotation(15);
        BitmapEncoder.saveBitmap(chart, out.resolve("refresh-latency").toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private void formation() {
        md.append("## Three nodes loading together vs one node\n\n")
                .append("| sessions | restart of all 3 nodes until ready | then until every node loaded | each node's pass, incl. waiting for the others (s) |\n"
                        + "|---|---|---|---|\n");
        for (RefreshLatency.Formation f : formations) {
            md.append(String.format(Locale.ROOT, "| %s | %.1f s | %.1f s | %s |%n", sessionsLabel(f.sessions()),
                    f.restartSeconds(), f.loadedSeconds(), f.nodePassSeconds().stream()
                            .map(s -> String.format(Locale.ROOT, "%.1f", s)).collect(Collectors.joining(", "))));
        }
        LoadResult single = loads.isEmpty() ? null : ourDefault(largest());
        if (single != null) {
            md.append(String.format(Locale.ROOT, "%nOne node alone, %s sessions at the defaults: %.1f s.%n",
                    sessionsLabel(single.sessions()), single.seconds()));
        }
        md.append("\nAll nodes share the machine's ").append(cpus()).append(" CPUs (and PostgreSQL runs beside them), so "
                + "three nodes cannot be three times as fast here; on separate machines each node reads and imports only "
                + "its own third.\n\n");
    }

    private void loadChart(int size, Path out) throws IOException {
        XYChart chart = new XYChartBuilder().width(1000).height(520)
                .title("Loading " + sessionsLabel(size) + " offline sessions on one node")
                .xAxisTitle("batch size (Keycloak 24: sessionsPerSegment)").yAxisTitle("seconds").build();
        chart.getStyler().setXAxisLogarithmic(true);
        for (int workers : settings.workers()) {
            series(chart, OURS + ", " + workers + (workers == 1 ? " worker" : " workers"),
                    loads.stream().filter(r -> r.loader().equals(OURS) && r.workers() == workers && r.sessions() == size
                            && r.ok()).toList());
        }
        series(chart, KC24, loads.stream().filter(r -> r.loader().equals(KC24) && r.sessions() == size && r.ok()).toList());
        LoadResult raw = best(RAW, size);
        if (raw != null) {
            List<Integer> xs = settings.batches();
            chart.addSeries("raw JDBC read", List.of(xs.get(0), xs.get(xs.size() - 1)), List.of(raw.seconds(), raw.seconds()))
                    .setMarker(SeriesMarkers.NONE);
        }
        BitmapEncoder.saveBitmap(chart, out.resolve("load-" + size).toString(), BitmapEncoder.BitmapFormat.PNG);
        md.append("![loading ").append(sessionsLabel(size)).append("](load-").append(size).append(".png)\n\n");
    }

    private void heapChart(Path out) throws IOException {
        int size = largest();
        XYChart chart = new XYChartBuilder().width(1000).height(520)
                .title("Peak heap after GC while loading " + sessionsLabel(size) + " sessions")
                .xAxisTitle("batch size (Keycloak 24: sessionsPerSegment)").yAxisTitle("MiB").build();
        chart.getStyler().setXAxisLogarithmic(true);
        for (int workers : settings.workers()) {
            List<LoadResult> rows = loads.stream().filter(r -> r.loader().equals(OURS) && r.workers() == workers
                    && r.sessions() == size && r.ok() && r.peakHeapMiB() > 0).toList();
            if (!rows.isEmpty()) {
                chart.addSeries(OURS + ", " + workers + " workers", rows.stream().map(LoadResult::batch).toList(),
                        rows.stream().map(r -> (double) r.peakHeapMiB()).toList());
            }
        }
        List<LoadResult> kc = loads.stream().filter(r -> r.loader().equals(KC24) && r.sessions() == size && r.ok()
                && r.peakHeapMiB() > 0).toList();
        if (!kc.isEmpty()) {
            chart.addSeries(KC24, kc.stream().map(LoadResult::batch).toList(), kc.stream().map(r -> (double) r.peakHeapMiB()).toList());
        }
        if (!chart.getSeriesMap().isEmpty()) {
            BitmapEncoder.saveBitmap(chart, out.resolve("heap-" + size).toString(), BitmapEncoder.BitmapFormat.PNG);
            md.append("![peak heap](heap-").append(size).append(".png)\n\n");
        }
    }

    private static void series(XYChart chart, String name, List<LoadResult> rows) {
        if (!rows.isEmpty()) {
            List<LoadResult> sorted = rows.stream().sorted(Comparator.comparingInt(LoadResult::batch)).toList();
            chart.addSeries(name, sorted.stream().map(LoadResult::batch).toList(), sorted.stream().map(LoadResult::seconds).toList());
        }
    }

    private void row(String label, IntFunction<LoadResult> pick) {
        md.append("| ").append(label).append(" | ");
        LoadResult last = null;
        for (int size : settings.sizes()) {
            LoadResult r = pick.apply(size);
            md.append(r == null ? "-" : String.format(Locale.ROOT, "%.1f s%s", r.seconds(), r.batch() > 0 && label.contains("best")
                    ? " (batch " + r.batch() + (r.workers() > 0 ? ", " + r.workers() + "w" : "") + ")" : "")).append(" | ");
            last = size == largest() ? r : last;
        }
        md.append(last == null ? "-" : String.format(Locale.ROOT, "%,.0f", last.sessionsPerSecond())).append(" |\n");
    }

    /** Execution time includes waiting (for a CPU, for the client); CPU is the database container's own work. */
    private void dbRow(String label, IntFunction<LoadResult> pick) {
        md.append("| ").append(label).append(" | ");
        for (int size : settings.sizes()) {
            LoadResult r = pick.apply(size);
            md.append(r == null ? "-" : String.format(Locale.ROOT, "%.1f s / %s s", r.dbSeconds(), cpu(r.dbCpuSeconds())))
                    .append(" | ");
        }
        md.append("\n");
    }

    /** The load's CPU on the node and in the database, and their sum: what it costs the machine, waiting aside. */
    private void cpuRow(String label, IntFunction<LoadResult> pick) {
        md.append("| ").append(label).append(" | ");
        for (int size : settings.sizes()) {
            LoadResult r = pick.apply(size);
            md.append(r == null || r.nodeCpuSeconds() < 0 || r.dbCpuSeconds() < 0 ? "-"
                    : String.format(Locale.ROOT, "%.1f + %.1f = %.1f s", r.nodeCpuSeconds(), r.dbCpuSeconds(),
                    r.nodeCpuSeconds() + r.dbCpuSeconds())).append(" | ");
        }
        md.append("\n");
    }

    private void ratio(String label, IntFunction<LoadResult> slow, IntFunction<LoadResult> fast) {
        md.append("| ").append(label).append(" | ");
        for (int size : settings.sizes()) {
            LoadResult a = slow.apply(size);
            LoadResult b = fast.apply(size);
            md.append(a == null || b == null || b.seconds() <= 0 ? "-"
                    : String.format(Locale.ROOT, "%.1f×", a.seconds() / b.seconds())).append(" | ");
        }
        md.append("\n");
    }

    private LoadResult ourDefault(int size) {
        return at(OURS, size, DEFAULT_BATCH, defaultWorkers());
    }

    private LoadResult at(String loader, int size, int batch) {
        return loads.stream().filter(r -> r.loader().equals(loader) && r.sessions() == size && r.batch() == batch && r.ok())
                .findFirst().orElse(null);
    }

    private LoadResult at(String loader, int size, int batch, int workers) {
        return loads.stream().filter(r -> r.loader().equals(loader) && r.sessions() == size && r.batch() == batch
                && r.workers() == workers && r.ok()).findFirst().orElse(null);
    }

    private LoadResult best(String loader, int size) {
        return LoadResult.fastest(loads, loader, size).orElse(null);
    }

    private Optional<RefreshLatency.Pass> pass(String setup, String whenContains) {
        return passes.stream().filter(p -> p.setup().equals(setup) && p.when().contains(whenContains)).findFirst();
    }

    private int largest() {
        return settings.sizes().stream().max(Integer::compare).orElseThrow();
    }

    private static int cpus() {
        return Runtime.getRuntime().availableProcessors();
    }

    static String sessionsLabel(int n) {
        if (n >= 1_000_000 && n % 100_000 == 0) {
            return (n % 1_000_000 == 0 ? Integer.toString(n / 1_000_000) : String.format(Locale.ROOT, "%.1f", n / 1e6)) + "M";
        }
        if (n >= 1000 && n % 1000 == 0) {
            return n / 1000 + "k";
        }
        return Integer.toString(n);
    }

    private static String cpu(double seconds) {
        return seconds < 0 ? "-" : String.format(Locale.ROOT, "%.1f", seconds);
    }

    private static String mib(long v) {
        return v < 0 ? "-" : Long.toString(v);
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f", v);
    }

    private static double totalMemoryGiB() {
        try {
            return ((OperatingSystemMXBean) ManagementFactory
                    .getOperatingSystemMXBean()).getTotalMemorySize() / (double) (1L << 30);
        } catch (RuntimeException | LinkageError e) {
            return Double.NaN;
        }
    }
}
