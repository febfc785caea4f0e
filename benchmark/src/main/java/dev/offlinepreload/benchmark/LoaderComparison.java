package dev.offlinepreload.benchmark;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.regex.Pattern;

import dev.offlinepreload.testsuite.cluster.Images;
import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.cluster.NodeLog;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Phases a-c: one node, an empty cache, the same seeded sessions; this provider across batch sizes and workers,
 * Keycloak 24.0.5's built-in preloader across sessionsPerSegment, and a raw JDBC read of the same rows.
 */
final class LoaderComparison {

    static final String KC24_VERSION = "24.0.5";
    /** Several client sessions per session need more heap than the one-client-session loads' 4 GiB. */
    private static final String SEVERAL_CLIENTS_HEAP = "8g";
    private static final Pattern OUR_PLANNED = Pattern.compile("Offline session preload on \\S+: loading \\d+ sessions");
    /** A pass's summary (not the line that ends a volatile pass's hot stage). */
    private static final Pattern OUR_END = Pattern.compile(
            "Offline session preload on \\S+ (finished|stopped|gave up)[^:]* in [0-9.]+ s: \\d+ loaded");
    /** Keycloak's line once it has started and serves requests: "Keycloak 26.7.4 on JVM (powered by Quarkus …) started in 9.1s." */
    private static final String KEYCLOAK_STARTED = ") started in ";
    private static final String KC24_START = "Start pre-loading userSessions from persistent storage";
    private static final String KC24_END = "Pre-loading userSessions from persistent storage finished";

    private final Settings settings;
    private final List<LoadResult> results = new ArrayList<>();
    private long ourBaselineMiB = -1;
    /** CPU seconds a node takes to start with nothing to load, per loader: subtracted from each load's node CPU. */
    private double ourStartupCpu;
    private double kc24StartupCpu;
    /** The heap of the capped-heap run (live heap after the largest load + 256 MiB), 0 before it ran. */
    private long cappedHeapMiB;

    LoaderComparison(Settings settings) {
        this.settings = settings;
    }

    List<LoadResult> results() {
        return results;
    }

    /** Heap a node keeps alive with nothing loaded (MiB): subtract from the live heap to get the cached data. */
    long ourBaselineMiB() {
        return ourBaselineMiB;
    }

    void runOurs() {
        int largest = settings.sizes().stream().max(Integer::compare).orElseThrow();
        try (KeycloakCluster cluster = oneNode("benchmark-ours", null, largest)) {
            KeycloakNode node = cluster.node(1);
            Database db = new Database(cluster);
            Seeding seeding = new Seeding(cluster, node);
            if (settings.jfrSeconds() > 0) {
                Progress.say("JFR profiles of the first %d s of every start go to %s", settings.jfrSeconds(),
                        settings.out().resolve("jfr").toAbsolutePath());
            }

            node.setEnv(KeycloakCluster.PRELOADING, "false");
            node.restart();
            ourStartupCpu = ContainerCpu.seconds(node);
            Progress.say("ours: a start with nothing to load took %.1f s of CPU", ourStartupCpu);
            node.setEnv(KeycloakCluster.PRELOADING, preloadingOn());
            if (settings.otherCollector() == null) {
                ourBaselineMiB = awaitPeriodicLive(node) >> 20;
                Progress.say("ours: baseline live heap %d MiB", ourBaselineMiB);
            } else {
                Progress.say("ours: %s instead of G1, live heap not read", settings.otherCollector());
            }

            for (int size : settings.sizes()) {
                seeding.upTo(size, db);
                results.add(rawRead(db, size));
                for (int workers : settings.workers()) {
                    for (int batch : settings.batches()) {
                        results.add(measureOurs(node, db, size, batch, workers, null));
                    }
                }
            }
            noTrafficPairs(LoadResult.OURS, ourStartupCpu, node, db, largest);
            // Memory target: the largest batch, at the default workers, must complete in a heap of the cached data +
            // 256 MiB (measured beside Keycloak 24 under the same cap, so only in runs that include it).
            int workers = settings.workers().contains(Report.defaultWorkers()) ? Report.defaultWorkers()
                    : settings.workers().stream().max(Integer::compare).orElseThrow();
            int batch = settings.batches().stream().max(Integer::compare).orElseThrow();
            LoadResult unconstrained = results.stream()
                    .filter(r -> r.loader().equals(LoadResult.OURS) && r.sessions() == largest && r.batch() == batch && r.workers() == workers)
                    .findFirst().orElseThrow();
            if (unconstrained.liveHeapMiB() > 0 && settings.runs("kc24")) {
                cappedHeapMiB = unconstrained.liveHeapMiB() + 256;
                node.setEnv("JAVA_OPTS_APPEND", ourJvmFlags(cappedHeapMiB + "m"));
                results.add(measureOurs(node, db, largest, batch, workers, cappedHeapMiB + " MiB heap"));
                node.setEnv("JAVA_OPTS_APPEND", ourJvmFlags(settings.heap()));
            }
            if (settings.clientSessions() > 1) {
                severalClientSessions(cluster, node, db, largest);
                node.setEnv("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT",
                        Long.toString((long) largest * settings.clientSessions() * 5 / 4 + 1000));
                node.setEnv("JAVA_OPTS_APPEND", ourJvmFlags(SEVERAL_CLIENTS_HEAP));
                results.add(measureOurs(node, db, largest, Report.DEFAULT_BATCH, Report.defaultWorkers(),
                        severalClientsNote()));
            }
        }
    }

    /**
     * This provider on a node of another Keycloak version ({@code --other-minors}), on its own database: the largest
     * size at the defaults and with adaptive-load=false, as {@link #runOurs} measures them on the project's version.
     */
    void runOursOn(String keycloakVersion) {
        int largest = settings.sizes().stream().max(Integer::compare).orElseThrow();
        String loader = LoadResult.oursOn(keycloakVersion);
        try (KeycloakCluster cluster = oneNode("benchmark-ours-" + keycloakVersion, keycloakVersion, largest)) {
            KeycloakNode node = cluster.node(1);
            Database db = new Database(cluster);
            node.setEnv(KeycloakCluster.PRELOADING, "false");
            node.restart();
            double startupCpu = ContainerCpu.seconds(node);
            Progress.say("%s: a start with nothing to load took %.1f s of CPU", loader, startupCpu);
            node.setEnv(KeycloakCluster.PRELOADING, preloadingOn());
            new Seeding(cluster, node).upTo(largest, db);
            results.add(measureOurs(loader, startupCpu, node, db, largest, Report.DEFAULT_BATCH, Report.defaultWorkers(), null));
            noTrafficPairs(loader, startupCpu, node, db, largest);
        }
    }

    /**
     * What adaptive-load costs a load with no traffic: after the defaults' load just measured, the same load with
     * adaptive-load=false (pair 1), then {@code --no-traffic-pairs} − 1 pairs more, each in the other order than the one
     * before (pair 2 adaptive-load=false first, pair 3 the defaults first, …), so that the machine's drift over the run
     * and whatever a load leaves to the next fall on both setups alike.
     */
    private void noTrafficPairs(String loader, double startupCpu, KeycloakNode node, Database db, int size) {
        node.setEnv(optionEnv("adaptive-load"), "false");
        results.add(measureOurs(loader, startupCpu, node, db, size, Report.DEFAULT_BATCH, Report.defaultWorkers(),
                Report.UNGOVERNED));
        for (int pair = 2; pair <= settings.noTrafficPairs(); pair++) {
            List<Boolean> order = Report.defaultsFirst(pair) ? List.of(true, false) : List.of(false, true);
            for (boolean adaptive : order) {
                node.setEnv(optionEnv("adaptive-load"), Boolean.toString(adaptive));
                results.add(measureOurs(loader, startupCpu, node, db, size, Report.DEFAULT_BATCH, Report.defaultWorkers(),
                        Report.pairNote(pair, adaptive)));
            }
        }
        node.setEnv(optionEnv("adaptive-load"), "true");
    }

    /**
     * The value of preloading under which a node of {@code --ours-mode} loads: with volatile sessions the shipped
     * default (unset), with persistent ones true.
     */
    private String preloadingOn() {
        return settings.oursMode().equals("volatile") ? null : "true";
    }

    /**
     * A started one-node cluster with this provider on {@code keycloakVersion} (null: the project's), in the session
     * mode {@code --ours-mode}, its offline caches sized for {@code largest} sessions.
     */
    private KeycloakCluster oneNode(String name, String keycloakVersion, int largest) {
        KeycloakCluster.Builder builder = KeycloakCluster.builder(name).keycloakVersion(keycloakVersion).nodes(1)
                .pgStatStatements().sharedBuffers(settings.sharedBuffers())
                .env("JAVA_OPTS_APPEND", ourJvmFlags(settings.heap()))
                .env("KC_LOG_LEVEL", "INFO")
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", Integer.toString(largest * 5 / 4 + 1000))
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", Integer.toString(largest * 5 / 4 + 1000));
        if (settings.oursMode().equals("volatile")) {
            builder.buildOptions(RestartWindow.VOLATILE);
        }
        settings.providerOptions().forEach((option, value) ->
                builder.env(optionEnv(option), value));
        return builder.build().start();
    }

    /** Empties the session tables and seeds the largest size again, with several client sessions per session. */
    private void severalClientSessions(KeycloakCluster cluster, KeycloakNode node, Database db, int size) {
        db.execute("DELETE FROM offline_client_session");
        db.execute("DELETE FROM offline_user_session");
        if (!node.isRunning()) {
            // the capped-heap run before may have run out of memory and left the node down; seeding creates its
            // realms through the node (a fresh start on the emptied tables loads nothing)
            node.start();
        }
        new Seeding(cluster, node, "several-", new SeedShape(0, settings.clientSessions(),
                Seeding.SHAPE.sessionsPerUser(), 0, 0, Seeding.SHAPE.spreadSeconds())).upTo(size, db);
    }

    /** The note that marks the loads with several client sessions per session (not part of the batch tables). */
    String severalClientsNote() {
        return settings.clientSessions() + " client sessions each";
    }

    void runKeycloak24() {
        String image = Images.keycloakWithoutProvider(Images.keycloak(KC24_VERSION), "--features=offline-session-preloading");
        try (KeycloakCluster cluster = KeycloakCluster.builder("benchmark-kc24").nodes(1).pgStatStatements()
                .sharedBuffers(settings.sharedBuffers())
                .keycloakImage(image).readinessPort(KeycloakNode.HTTP_PORT)
                .env("KC_BOOTSTRAP_ADMIN_USERNAME", null).env("KC_BOOTSTRAP_ADMIN_PASSWORD", null)
                .env("KEYCLOAK_ADMIN", KeycloakCluster.ADMIN_USER).env("KEYCLOAK_ADMIN_PASSWORD", KeycloakCluster.ADMIN_PASSWORD)
                .env("KC_HOSTNAME", null).env("KC_HOSTNAME_STRICT", "false")
                .env("KC_SPI_USER_SESSIONS_INFINISPAN_PRELOAD_OFFLINE_SESSIONS_FROM_DATABASE", "true")
                .env("KC_SPI_USER_SESSIONS_INFINISPAN_SESSIONS_PRELOAD_TIMEOUT_IN_SECONDS", "3600")
                .env("KC_LOG_LEVEL", "INFO,org.keycloak.models.sessions.infinispan.InfinispanUserSessionProviderFactory:debug")
                .env("JAVA_OPTS_APPEND", kc24JvmFlags(settings.heap()))
                .build().start()) {
            KeycloakNode node = cluster.node(1);
            Database db = new Database(cluster);
            Seeding seeding = new Seeding(cluster, node);
            node.restart(); // nothing seeded yet: a start with nothing to load, past the schema's creation
            kc24StartupCpu = ContainerCpu.seconds(node);
            Progress.say("Keycloak 24: a start with nothing to load took %.1f s of CPU", kc24StartupCpu);
            // Keycloak 24 runs its own default collector (ParallelGC), which has no idle-time full GC: its peak heap
            // after GC is measured like ours, its live heap after loading is not.
            for (int size : settings.sizes()) {
                seeding.upTo(size, db);
                results.add(rawRead(db, size).withLoader("raw JDBC read (24 schema)"));
                for (int segment : settings.kc24Segments()) {
                    results.add(measureKeycloak24(node, db, size, segment, null));
                }
            }
            // The same constrained heap as ours, at Keycloak 24's best setting.
            int largest = settings.sizes().stream().max(Integer::compare).orElseThrow();
            if (cappedHeapMiB > 0) {
                int best = LoadResult.fastest(results, LoadResult.KC24, largest).orElseThrow().batch();
                node.setEnv("JAVA_OPTS_APPEND", kc24JvmFlags(cappedHeapMiB + "m"));
                node.startupTimeout(Duration.ofMinutes(3));
                results.add(measureKeycloak24(node, db, largest, best, cappedHeapMiB + " MiB heap"));
            }
            if (settings.clientSessions() > 1) {
                int best = LoadResult.fastest(results, LoadResult.KC24, largest).orElseThrow().batch();
                severalClientSessions(cluster, node, db, largest);
                node.setEnv("JAVA_OPTS_APPEND", kc24JvmFlags(SEVERAL_CLIENTS_HEAP));
                node.startupTimeout(Duration.ofMinutes(5));
                results.add(measureKeycloak24(node, db, largest, best, severalClientsNote()));
            }
        }
    }

    private LoadResult rawRead(Database db, int size) {
        db.rawRead(); // warm-up: the first read also pulls the table into the OS cache
        double best = Double.MAX_VALUE;
        double bestCpu = -1;
        for (int i = 0; i < 3; i++) {
            double cpu = db.cpuSeconds();
            double seconds = db.rawRead();
            if (seconds < best) {
                best = seconds;
                bestCpu = db.cpuSeconds() - cpu;
            }
        }
        Progress.say("raw read of %d sessions: %.2f s, database CPU %.2f s", size, best, bestCpu);
        return new LoadResult(LoadResult.RAW, size, 0, 1, best, -1, -1, -1, best, bestCpu, -1, 0, "");
    }

    private LoadResult measureOurs(KeycloakNode node, Database db, int size, int batch, int workers, String heapNote) {
        return measureOurs(LoadResult.OURS, ourStartupCpu, node, db, size, batch, workers, heapNote);
    }

    /**
     * @param loader     the label of the result: {@link LoadResult#OURS}, or {@link LoadResult#oursOn} another minor
     * @param startupCpu CPU seconds that loader's node took to start with nothing to load
     */
    private LoadResult measureOurs(String loader, double startupCpu, KeycloakNode node, Database db, int size, int batch,
                                   int workers, String heapNote) {
        node.setEnv(optionEnv("batch-size"), Integer.toString(batch));
        node.setEnv(optionEnv("workers-per-node"), Integer.toString(workers));
        db.settle();
        db.resetStatements();
        double cpu = db.cpuSeconds();
        try {
            node.restart();
            await("preload done").atMost(Duration.ofMinutes(20)).pollInterval(Duration.ofMillis(200))
                    .until(() -> !node.isRunning() || lastLine(node, l -> OUR_END.matcher(l).find()) != null);
        } catch (RuntimeException e) {
            return failed(loader, size, batch, workers, node, e);
        }
        if (!node.isRunning()) {
            return failed(loader, size, batch, workers, node, null);
        }
        double dbCpuSeconds = db.cpuSeconds() - cpu;
        double nodeCpuSeconds = ContainerCpu.seconds(node) - startupCpu;
        NodeMetrics metrics = NodeMetrics.scrape(node);
        double seconds = metrics.value("keycloak_offline_preload_last_pass_seconds");
        String end = lastLine(node.log().linesSinceStart(), l -> OUR_END.matcher(l).find());
        double fromReady = fromReadySeconds(node.log().linesSinceStart());
        long loaded = metrics.preloaded("loaded");
        double dbSeconds = db.sessionTableSeconds();
        db.topStatements(6).forEach(line -> Progress.say("ours: db %s", line));
        Progress.say("ours: %s", lastLine(node, l -> OUR_PLANNED.matcher(l).find())); // its time: when planning ended
        Progress.say("ours: %s", end);
        GcLog.Window gc = settings.otherCollector() == null ? awaitWindow(node, l -> true, l -> OUR_END.matcher(l).find())
                : GcLog.window(node.log().linesSinceStart(), l -> true, l -> OUR_END.matcher(l).find());
        if (settings.jfrSeconds() > 0) {
            copyProfile(node, "ours-" + size + "-b" + batch + "-w" + workers, heapNote);
        }
        String note = heapNote == null ? "" : heapNote;
        if (loaded < size) {
            note = (note + " loaded only " + loaded).trim();
        }
        LoadResult result = new LoadResult(loader, size, batch, workers, seconds, fromReady, gc.peakAfterGcBytes() >> 20,
                gc.liveAfterBytes() == null ? -1 : gc.liveAfterBytes() >> 20, dbSeconds, dbCpuSeconds, nodeCpuSeconds,
                gc.pauseMillis() / 1000, note);
        Progress.say("ours: %s", result.csv());
        return result;
    }

    private LoadResult measureKeycloak24(KeycloakNode node, Database db, int size, int segment, String heapNote) {
        node.setEnv("KC_SPI_USER_SESSIONS_INFINISPAN_SESSIONS_PER_SEGMENT", Integer.toString(segment));
        db.settle();
        db.resetStatements();
        double cpu = db.cpuSeconds();
        try {
            node.restart(); // Keycloak 24 loads during startup: ready means loaded
        } catch (RuntimeException e) {
            return failed(LoadResult.KC24, size, segment, 0, node, e);
        }
        double dbCpuSeconds = db.cpuSeconds() - cpu;
        double nodeCpuSeconds = ContainerCpu.seconds(node) - kc24StartupCpu;
        List<String> lines = node.log().linesSinceStart();
        String start = lastLine(node, l -> l.contains(KC24_START));
        String end = lastLine(node, l -> l.contains(KC24_END));
        if (start == null || end == null) {
            throw new IllegalStateException("Keycloak 24 logged no pre-loading lines; is the DEBUG category right? " + lines.size());
        }
        double seconds = NodeLog.secondsBetween(start, end);
        double dbSeconds = db.sessionTableSeconds();
        GcLog.Window gc = GcLog.window(node.log().linesSinceStart(), l -> l.contains(KC24_START), l -> l.contains(KC24_END));
        if (settings.jfrSeconds() > 0) {
            copyProfile(node, "kc24-" + size + "-s" + segment, heapNote);
        }
        LoadResult result = new LoadResult(LoadResult.KC24, size, segment, 0, seconds, -1,
                gc.peakAfterGcBytes() >> 20, gc.liveAfterBytes() == null ? -1 : gc.liveAfterBytes() >> 20, dbSeconds,
                dbCpuSeconds, nodeCpuSeconds, gc.pauseMillis() / 1000, heapNote == null ? "" : heapNote);
        Progress.say("Keycloak 24: %s", result.csv());
        return result;
    }

    private static LoadResult failed(String loader, int size, int batch, int workers, KeycloakNode node, RuntimeException e) {
        boolean oom = node.log().linesSinceStart().stream().anyMatch(l -> l.contains("OutOfMemoryError"));
        String note = oom ? "out of memory" : "failed: " + (e == null ? "node stopped" : e.getClass().getSimpleName());
        Progress.say("%s, %d sessions, batch %d: %s", loader, size, batch, note);
        // also a container that exited (out of memory): Testcontainers' start() does nothing while it still holds one
        node.stop();
        return new LoadResult(loader, size, batch, workers, 0, -1, -1, -1, 0, -1, -1, 0, note);
    }

    private static GcLog.Window awaitWindow(KeycloakNode node, Predicate<String> start, Predicate<String> end) {
        try {
            return await("periodic full GC after loading").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250))
                    .until(() -> GcLog.window(node.log().linesSinceStart(), start, end), w -> w.liveAfterBytes() != null);
        } catch (ConditionTimeoutException e) {
            return GcLog.window(node.log().linesSinceStart(), start, end);
        }
    }

    private static long awaitPeriodicLive(KeycloakNode node) {
        return await("periodic full GC").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
                .until(() -> GcLog.firstPeriodicLive(node.log().linesSinceStart()), Objects::nonNull);
    }

    /**
     * Seconds from Keycloak's "started" line to the end of this provider's pass in a node's log, so that a wait before
     * the pass (the quiet start) counts; -1 without a "started" line.
     */
    static double fromReadySeconds(List<String> lines) {
        String ready = lastLine(lines, l -> l.contains(KEYCLOAK_STARTED));
        String end = lastLine(lines, l -> OUR_END.matcher(l).find());
        return ready == null || end == null ? -1 : NodeLog.secondsBetween(ready, end);
    }

    private static String lastLine(KeycloakNode node, Predicate<String> match) {
        return lastLine(node.log().linesSinceStart(), match);
    }

    private static String lastLine(List<String> lines, Predicate<String> match) {
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (match.test(lines.get(i))) {
                return lines.get(i);
            }
        }
        return null;
    }

    /** @param note the run's note (capped heap, several client sessions), in the file's name if any */
    private void copyProfile(KeycloakNode node, String name, String note) {
        String file = note == null ? name : name + "-" + note.replaceAll("[^A-Za-z0-9]+", "-");
        JfrProfile.copy(node, settings.jfrSeconds(), settings.out().resolve("jfr").resolve(file + ".jfr"));
    }

    /** -Xms = -Xmx so that every run has the same heap, plus the GC log flags; an OOM ends the JVM instead of hanging. */
    static String heapFlags(String heap) {
        return "-Xms" + heap + " -Xmx" + heap + " -XX:+ExitOnOutOfMemoryError " + GcLog.JVM_FLAGS;
    }

    /**
     * This provider's nodes: the heap flags, then {@code --jvm-options}; before another collector, G1 off (Keycloak's
     * kc.sh selects it, the JVM keeps the last value of a flag and refuses two collectors).
     */
    private String ourJvmFlags(String heap) {
        List<String> flags = new ArrayList<>(List.of(heapFlags(heap)));
        if (settings.otherCollector() != null) {
            flags.add("-XX:-UseG1GC");
        }
        flags.addAll(settings.jvmOptions());
        flags.addAll(profileFlags());
        return String.join(" ", flags);
    }

    /** Keycloak 24's nodes: the heap flags (its own collector), and the profile of each start if asked. */
    private String kc24JvmFlags(String heap) {
        List<String> flags = new ArrayList<>(List.of(heapFlags(heap)));
        flags.addAll(profileFlags());
        return String.join(" ", flags);
    }

    /** {@link JfrProfile}, copied after each load. Keycloak 24 loads during its startup: give it enough seconds. */
    private List<String> profileFlags() {
        return settings.jfrSeconds() > 0 ? List.of(JfrProfile.flag(settings.jfrSeconds())) : List.of();
    }
}
