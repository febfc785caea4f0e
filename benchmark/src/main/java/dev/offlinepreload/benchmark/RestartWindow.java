package dev.offlinepreload.benchmark;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.offlinepreload.testsuite.cluster.Images;
import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder.Realm;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import org.keycloak.admin.client.Keycloak;
import org.keycloak.representations.idm.RealmRepresentation;

/**
 * Phase {@code window}, the restart window: 3 nodes restarted together, then, from the moment all are ready, an
 * open-model load of token refreshes (each request starts on its schedule, whatever the others do, and its latency
 * counts from that scheduled start: no coordinated omission), spread round-robin over the nodes and over real offline
 * tokens: in the mix {@code refresh} token refreshes only; in the mix {@code read-heavy} three of four requests are
 * userinfo calls with an offline session's access token (a read-only lookup of the session, which a cache hit serves
 * without the database in either session mode) and the fourth a refresh. Per 10-second window: p50, p99, max and
 * errors, for each of {@code --window-setups} (stock Keycloak 26.7.4,
 * this provider at its defaults, with adaptive-load=false, and installed with preloading=false) side by side, in each of {@code --window-modes}
 * (persistent sessions, Keycloak's default, and volatile); per setup also the database's CPU over the window, the
 * session-row SELECTs Keycloak ran per request (the loader's statements, tagged, are not counted) and when every node
 * had finished its load. With {@code --window-repeat} above 1, stock's and the provider's windows alternate, repeat by
 * repeat (each cluster's nodes stopped while the other is measured), and a second table gives each setup's median p99
 * per window.
 */
final class RestartWindow {

    private static final String REALM = "window";
    private static final String CLIENT = "app-1";
    private static final int WINDOW_SECONDS = 10;
    private static final int CALLERS = 64;
    private static final String ADAPTIVE = "KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__ADAPTIVE_LOAD";
    private static final String PRELOADING = "KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__PRELOADING";
    /** The provider's setups, in the order they run, and their labels in the tables. */
    private static final List<String> PROVIDER_SETUPS = List.of("defaults", "off", "uncapped");
    private static final Map<String, String> LABELS = Map.of("defaults", "defaults", "off", "preloading=false",
            "uncapped", "adaptive-load=false");
    /** How often every node's metrics are read while the traffic runs, in every setup alike (a scrape costs CPU). */
    private static final Duration POLL_DURING_TRAFFIC = Duration.ofSeconds(5);

    /** One request: when it was due (ms after ready), its latency from then (ms), whether it failed. */
    private record Sample(double dueMillis, double latencyMillis, boolean failed) {
    }

    /** One setup's window. */
    private record Run(String setup, List<Sample> samples, double loadedSeconds, double databaseCpuSeconds,
                       double selectsPerRequest) {
    }

    private static final String VOLATILE = "--features-disabled=persistent-user-sessions";

    private final Settings settings;
    private final int perSecond;
    private final int seconds;
    private final List<Run> measured = new ArrayList<>();
    private final StringBuilder tables = new StringBuilder();
    /** The mix of the window being measured: "refresh" or "read-heavy". */
    private String mix;

    RestartWindow(Settings settings) {
        this.settings = settings;
        this.perSecond = settings.windowRate();
        this.seconds = settings.windowSeconds();
    }

    void run() {
        for (String mode : settings.windowModes()) {
            String build = mode.equals("volatile") ? VOLATILE : "";
            measured.clear();
            List<Prepared> clusters = new ArrayList<>();
            try {
                if (settings.windowSetups().contains("stock")) {
                    clusters.add(prepare(RefreshLatency.STOCK, Images.keycloakWithoutProvider(Images.keycloak(), build), build));
                }
                if (PROVIDER_SETUPS.stream().anyMatch(settings.windowSetups()::contains)) {
                    clusters.add(prepare(RefreshLatency.OURS, null, build));
                }
                for (String m : settings.windowMixes()) {
                    mix = m;
                    // Stock's and the provider's windows alternate, repeat by repeat, so that whatever drifts over
                    // the run (the machine, the databases) spreads over every setup alike. A cluster's nodes are
                    // stopped while the other cluster is measured.
                    for (int r = 1; r <= settings.windowRepeat(); r++) {
                        String run = settings.windowRepeat() > 1 ? " #" + r : "";
                        for (Prepared prepared : clusters) {
                            measureOnce(prepared, run);
                        }
                    }
                }
            } finally {
                clusters.forEach(c -> c.cluster().close());
            }
            for (String m : settings.windowMixes()) {
                List<Run> ofMix = measured.stream().filter(r -> r.setup().endsWith(" [" + m + "]")).toList();
                String table = table(ofMix) + (settings.windowRepeat() > 1 ? "\n" + medians(ofMix) : "");
                tables.append("### ").append(mode).append(" sessions, ").append(m).append("\n\n").append(table).append('\n');
                Progress.say("%n%s", table);
            }
        }
        write();
    }

    /** A seeded cluster between its windows: its nodes stopped, the tokens and the next window's access tokens at hand. */
    private static final class Prepared {
        final String setup;
        final KeycloakCluster cluster;
        final Database db;
        final List<String> tokens;
        List<String> access = List.of();

        Prepared(String setup, KeycloakCluster cluster, Database db, List<String> tokens) {
            this.setup = setup;
            this.cluster = cluster;
            this.db = db;
            this.tokens = tokens;
        }

        KeycloakCluster cluster() {
            return cluster;
        }

        boolean ours() {
            return setup.equals(RefreshLatency.OURS);
        }
    }

    private Prepared prepare(String setup, String image, String build) {
        KeycloakCluster.Builder builder = RefreshLatency.cluster("benchmark-window", settings.windowSessions(), settings, image);
        if (image == null) {
            builder.buildOptions(build);
        }
        if (settings.jfrSeconds() > 0) {
            builder.env("JAVA_OPTS_APPEND", JfrProfile.flag(settings.jfrSeconds()));
        }
        KeycloakCluster cluster = builder.build().start();
        try {
            List<String> tokens;
            try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
                Realm realm = seeder.createRealm(cluster.node(1), REALM, 1, RefreshLatency.USERS);
                tokens = RefreshLatency.login(cluster, realm, settings.windowTokens());
                seeder.seed(realm, SeedShape.simple(settings.windowSessions() - settings.windowTokens()));
            }
            try (Keycloak admin = TestRealm.admin(cluster.node(1))) {
                // The access tokens of the read-heavy mix are fetched before each restart and must outlive its window.
                RealmRepresentation realm = admin.realm(REALM).toRepresentation();
                realm.setAccessTokenLifespan(3600);
                admin.realm(REALM).update(realm);
            }
            Prepared prepared = new Prepared(setup, cluster, new Database(cluster), tokens);
            // One untimed restart first: a cluster's first restart after seeding ran measurably slower than its later
            // ones (2026-11-26: stock's p99 in 10-20 s 12.2 s, then 6.8 s), and would count against whichever setup
            // happens to come first.
            prepared.db.settle();
            cluster.restartAll();
            pause(prepared);
            return prepared;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** Fetches the next window's access tokens where the read-heavy mix needs them, then stops the nodes. */
    private void pause(Prepared prepared) {
        if (settings.windowMixes().contains("read-heavy")) {
            prepared.access = accessTokens(prepared.cluster, prepared.tokens);
        }
        prepared.cluster.nodes().forEach(KeycloakNode::stopGracefully);
    }

    private void measureOnce(Prepared prepared, String run) {
        if (!prepared.ours()) {
            measured.add(window(prepared.setup + run, prepared, false));
            pause(prepared);
            return;
        }
        // The provider's setups alternate on one cluster too.
        for (String ours : PROVIDER_SETUPS) {
            if (settings.windowSetups().contains(ours)) {
                prepared.cluster.nodes().forEach(n -> n.setEnv(ADAPTIVE, Boolean.toString(!ours.equals("uncapped"))));
                prepared.cluster.nodes().forEach(n -> n.setEnv(PRELOADING, Boolean.toString(!ours.equals("off"))));
                measured.add(window(prepared.setup + ", " + LABELS.get(ours) + run, prepared, !ours.equals("off")));
                pause(prepared);
            }
        }
    }

    /** A fresh access token per offline token, fetched before the restart: the read-heavy mix's userinfo calls use them. */
    private static List<String> accessTokens(KeycloakCluster cluster, List<String> tokens) {
        List<KeycloakNode> nodes = cluster.nodes();
        List<String> access = new ArrayList<>(tokens.size());
        for (int i = 0; i < tokens.size(); i++) {
            OidcClient.TokenResponse refreshed = new OidcClient(nodes.get(i % nodes.size()), REALM, CLIENT).refresh(tokens.get(i));
            if (refreshed.status() != 200) {
                throw new IllegalStateException("Refresh before the window failed: " + refreshed);
            }
            access.add(refreshed.accessToken());
        }
        return access;
    }

    private Run window(String baseSetup, Prepared prepared, boolean loads) {
        String setup = baseSetup + " [" + mix + "]";
        boolean readHeavy = mix.equals("read-heavy");
        KeycloakCluster cluster = prepared.cluster;
        Database db = prepared.db;
        List<String> tokens = prepared.tokens;
        List<String> access = prepared.access;
        db.settle(); // the traffic of the window before left dead tuples and dirty pages behind
        cluster.restartAll();
        db.resetStatements();
        double cpuBefore = db.cpuSeconds();
        List<KeycloakNode> nodes = cluster.nodes();
        List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
        ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
        ScheduledExecutorService schedule = Executors.newSingleThreadScheduledExecutor();
        long ready = System.nanoTime();
        Progress.say("%s: every node ready at %s", setup, LocalTime.now());
        AtomicLong loadedAt = new AtomicLong(-1);
        int total = perSecond * seconds;
        for (int i = 0; i < total; i++) {
            int n = i;
            long dueNanos = i * 1_000_000_000L / perSecond;
            schedule.schedule(() -> callers.submit(() -> {
                long due = ready + dueNanos;
                KeycloakNode node = nodes.get(n % nodes.size());
                boolean ok = readHeavy && n % 4 != 0 ? userinfo(node, access.get(n % access.size()))
                        : refresh(node, tokens.get(n % tokens.size()));
                samples.add(new Sample(dueNanos / 1e6, (System.nanoTime() - due) / 1e6, !ok));
            }), dueNanos, TimeUnit.NANOSECONDS);
        }
        // Every setup's nodes are scraped alike while the traffic runs (stock's too, results unused).
        ScheduledExecutorService poll = Executors.newSingleThreadScheduledExecutor();
        poll.scheduleWithFixedDelay(() -> {
            try {
                List<NodeMetrics> scraped = nodes.stream().map(NodeMetrics::scrape).toList();
                if (loads && loadedAt.get() < 0 && scraped.stream().allMatch(m -> m.preloadState("done"))) {
                    loadedAt.set(System.nanoTime());
                }
            } catch (RuntimeException e) {
                Progress.say("metrics not read: %s", e.getMessage());
            }
        }, POLL_DURING_TRAFFIC.toMillis(), POLL_DURING_TRAFFIC.toMillis(), TimeUnit.MILLISECONDS);
        schedule.shutdown();
        try {
            schedule.awaitTermination(seconds + 60L, TimeUnit.SECONDS);
            callers.shutdown();
            callers.awaitTermination(5, TimeUnit.MINUTES);
            poll.shutdown();
            poll.awaitTermination(1, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (loads && loadedAt.get() < 0) {
            await("every node loaded").atMost(Duration.ofMinutes(20)).pollInterval(Duration.ofMillis(500))
                    .until(() -> nodes.stream().allMatch(node -> NodeMetrics.scrape(node).preloadState("done")));
            loadedAt.set(System.nanoTime());
        }
        if (settings.jfrSeconds() > 0) {
            // Each node's first --jfr seconds from its JVM's start; the window began at the wall-clock time logged.
            for (int n = 0; n < nodes.size(); n++) {
                JfrProfile.copy(nodes.get(n), settings.jfrSeconds(), settings.out().resolve("jfr")
                        .resolve(("window-" + setup + "-node" + (n + 1)).replaceAll("[^A-Za-z0-9#=-]+", "-") + ".jfr"));
            }
        }
        double loaded = loadedAt.get() < 0 ? Double.NaN : (loadedAt.get() - ready) / 1e9;
        Run run = new Run(setup, List.copyOf(samples), loaded, db.cpuSeconds() - cpuBefore,
                db.sessionTableSelects() / Math.max(1, samples.size()));
        Progress.say("%s: %d refreshes due at %d/s for %d s, all loaded %.1f s after ready, database %.1f CPU-s, "
                + "%.2f session-row SELECTs per request", setup, samples.size(), perSecond, seconds, loaded,
                run.databaseCpuSeconds(), run.selectsPerRequest());
        return run;
    }

    private static boolean userinfo(KeycloakNode node, String accessToken) {
        try {
            return new OidcClient(node, REALM, CLIENT).userinfo(accessToken) == 200;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static boolean refresh(KeycloakNode node, String token) {
        try {
            return new OidcClient(node, REALM, CLIENT).refresh(token).status() == 200;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** The table: one row per 10-s window, p50 / p99 / max (ms) and errors per setup, side by side. */
    String table(List<Run> runs) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "Restart window: %d nodes, %d sessions, %d real offline tokens, %d requests/s "
                + "for %d s from ready (open model: latency from each request's scheduled start)%n%n",
                RefreshLatency.NODES, settings.windowSessions(), settings.windowTokens(), perSecond, seconds));
        out.append("| window after ready |");
        runs.forEach(r -> out.append(' ').append(r.setup()).append(": p50 / p99 / max ms, errors |"));
        out.append("\n|---|").append("---|".repeat(runs.size())).append('\n');
        for (int w = 0; w * WINDOW_SECONDS < seconds; w++) {
            double from = w * WINDOW_SECONDS * 1000.0;
            double to = from + WINDOW_SECONDS * 1000.0;
            out.append(String.format(Locale.ROOT, "| %d–%d s |", w * WINDOW_SECONDS, (w + 1) * WINDOW_SECONDS));
            for (Run run : runs) {
                out.append(' ').append(cell(run.samples().stream().filter(s -> s.dueMillis() >= from && s.dueMillis() < to).toList()))
                        .append(" |");
            }
            out.append('\n');
        }
        out.append("| whole window |");
        runs.forEach(r -> out.append(' ').append(cell(r.samples())).append(" |"));
        out.append("\n| all nodes loaded after ready |");
        runs.forEach(r -> out.append(Double.isNaN(r.loadedSeconds()) ? " – |"
                : String.format(Locale.ROOT, " %.1f s |", r.loadedSeconds())));
        out.append("\n| database CPU over the window (loads included) |");
        runs.forEach(r -> out.append(String.format(Locale.ROOT, " %.1f s |", r.databaseCpuSeconds())));
        out.append("\n| Keycloak's session-row SELECTs per request |");
        runs.forEach(r -> out.append(String.format(Locale.ROOT, " %.2f |", r.selectsPerRequest())));
        return out.append('\n').toString();
    }

    /**
     * Per setup, the median over its repeats of each 10-s window's p99: one run's p99 in the first windows varies by
     * a factor of two from restart to restart of the same setup, the median of three much less.
     */
    String medians(List<Run> runs) {
        Map<String, List<Run>> bySetup = new LinkedHashMap<>();
        runs.forEach(r -> bySetup.computeIfAbsent(r.setup().replaceAll(" #\\d+", ""), k -> new ArrayList<>()).add(r));
        StringBuilder out = new StringBuilder("Median over the repeats of each window's p99 (ms):\n\n| window after ready |");
        bySetup.forEach((setup, ofSetup) -> out.append(' ').append(setup).append(", ").append(ofSetup.size()).append(" runs |"));
        out.append("\n|---|").append("---|".repeat(bySetup.size())).append('\n');
        for (int w = 0; w * WINDOW_SECONDS < seconds; w++) {
            double from = w * WINDOW_SECONDS * 1000.0;
            double to = from + WINDOW_SECONDS * 1000.0;
            out.append(String.format(Locale.ROOT, "| %d–%d s |", w * WINDOW_SECONDS, (w + 1) * WINDOW_SECONDS));
            bySetup.values().forEach(ofSetup -> out.append(' ').append(ms(median(ofSetup.stream().map(r -> p99(
                    r.samples().stream().filter(s -> s.dueMillis() >= from && s.dueMillis() < to).toList())).toList())))
                    .append(" |"));
            out.append('\n');
        }
        out.append("| whole window |");
        bySetup.values().forEach(ofSetup -> out.append(' ')
                .append(ms(median(ofSetup.stream().map(r -> p99(r.samples())).toList()))).append(" |"));
        return out.append('\n').toString();
    }

    private static double p99(List<Sample> samples) {
        return new Latencies(samples.stream().filter(s -> !s.failed()).map(Sample::latencyMillis).toList(), 0, 0).percentile(99);
    }

    static double median(List<Double> values) {
        List<Double> sorted = values.stream().filter(v -> !Double.isNaN(v)).sorted().toList();
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        int mid = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(mid) : (sorted.get(mid - 1) + sorted.get(mid)) / 2;
    }

    private static String cell(List<Sample> samples) {
        List<Double> ok = samples.stream().filter(s -> !s.failed()).map(Sample::latencyMillis).toList();
        Latencies latencies = new Latencies(ok, 0, 0);
        long errors = samples.stream().filter(Sample::failed).count();
        return String.format(Locale.ROOT, "%s / %s / %s, %d", ms(latencies.percentile(50)), ms(latencies.percentile(99)),
                ms(latencies.percentile(100)), errors);
    }

    private static String ms(double millis) {
        return Double.isNaN(millis) ? "–" : millis >= 1000 ? String.format(Locale.ROOT, "%.1f s", millis / 1000)
                : String.format(Locale.ROOT, "%.0f", millis);
    }

    private void write() {
        try {
            Files.createDirectories(settings.out());
            Files.writeString(settings.out().resolve("restart-window.md"), tables);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
