package dev.offlinepreload.benchmark;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.awaitility.Awaitility.await;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;

import javax.imageio.ImageIO;

import dev.offlinepreload.testsuite.cluster.Images;
import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder.Realm;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.db.Sql;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.TestRealm;
import dev.offlinepreload.testsuite.keycloak.TokenMinter;
import org.keycloak.admin.client.Keycloak;
import org.keycloak.representations.idm.RealmRepresentation;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.Marker;

/**
 * Phase {@code window}, the restart window: 3 nodes restarted together, then, from the moment all are ready, an
 * open-model load of token refreshes (each request starts on its schedule, whatever the others do, and its latency
 * counts from that scheduled start: no coordinated omission), spread round-robin over the nodes and, in spread
 * {@code few}, over real offline tokens (a few percent of the sessions), in spread {@code most} each to another seeded
 * session drawn at random from all (offline tokens minted with the realm's keys, {@link TokenMinter}; no session twice
 * in a cell, so none is among the recently refreshed that the provider loads first): in the mix {@code refresh}
 * token refreshes only; in the mixes {@code read-heavy} and {@code introspection} three of four requests are
 * read-only lookups of an offline session with its access token (userinfo calls; token introspection by a confidential
 * client in the token's audience, as an API would), which a cache hit serves without the database in either session
 * mode, and the fourth a refresh. Per 10-second window: p50, p99, max and
 * errors, for each of {@code --window-setups} (stock Keycloak 26.7.4,
 * this provider at its defaults (with persistent sessions: preloading off), with preloading=true, with
 * adaptive-load=false, with adaptive-load=false under a fixed max-sessions-per-second, and installed with
 * preloading=false) side by side, in each of {@code --window-modes}
 * (persistent sessions, Keycloak's default, and volatile) and at each of {@code --window-rates}; per setup also the
 * database's CPU over the window, the session-row SELECTs Keycloak ran per request (the loader's statements, tagged,
 * are not counted), when every node had finished its load, and from which window on the p99 stayed at steady state.
 * With {@code --window-repeat} above 1, the setups take turns, each repeat beginning one setup later than the one
 * before (each cluster's nodes stopped while the other is measured), and a second table gives each setup's median p99
 * per window.
 *
 * <p>A cell (mode, mix, rate, spread) is written to {@code restart-window/<cell>.md} with its chart
 * ({@code <cell>.png}: p99 per window for every setup, and the loaders' rate) as soon as it is measured; a later run with the same settings
 * keeps a cell that is already there, so the matrix can fill over several runs. {@code restart-window.md} gathers
 * every cell measured with the same settings, by this run or an earlier one.
 */
final class RestartWindow {

    private static final String REALM = "window";
    private static final String CLIENT = "app-1";
    private static final int WINDOW_SECONDS = 10;
    private static final int CALLERS = 64;
    static final String ADAPTIVE = optionEnv("adaptive-load");
    static final String CAP = optionEnv("max-sessions-per-second");
    private static final String PARTICIPATING = optionEnv("participating-nodes");
    /**
     * The setups measured on the provider's cluster, the rest on stock's: the provider's, and {@code stock-here}, stock
     * Keycloak on the provider's cluster and database ({@link #stockHere}).
     */
    private static final List<String> ON_PROVIDERS_CLUSTER = List.of("defaults", "on", "off", "uncapped", "fixed", "idle",
            "stock-here", "stock-indexed", "baseline");
    /**
     * The {@code idle} setup's participating-nodes, a name no node has: every node starts as with preloading=true (the
     * removal listener on the offline caches, the started-node marker) but starts no coordinator and loads nothing.
     */
    private static final String NO_NODE = "no-node";
    /** How often every node's metrics are read while the traffic runs, in every setup alike (a scrape costs CPU). */
    private static final Duration POLL_DURING_TRAFFIC = Duration.ofSeconds(5);

    /** One request: when it was due (ms after ready), its latency from then (ms), whether it failed. */
    private record Sample(double dueMillis, double latencyMillis, boolean failed) {
    }

    /** Sessions every node together had loaded, so many seconds after ready. */
    record Loaded(double seconds, long sessions) {
    }

    /**
     * One setup's window; {@code startSeconds}: from starting the first node again until every node was ready, which
     * hold-readiness lengthens (the nodes stop after each window, and the stop is not timed).
     */
    private record Run(String setup, double startSeconds, List<Sample> samples, List<Loaded> loaded, double loadedSeconds,
                       double databaseCpuSeconds, double otherDatabaseCpuSeconds, double selectsPerRequest,
                       Traffic traffic) {
    }

    /**
     * CPU time used from ready until the last response came in, by the database and by the Keycloak nodes together:
     * the same requests in every setup, so the work each setup spent on them, whatever it did beside them.
     */
    private record Traffic(double databaseCpuSeconds, double keycloakCpuSeconds) {
    }

    /**
     * One cell of the matrix: a mode, a traffic mix, a rate and a spread, every setup measured in it side by side.
     * Spread {@code few}: the requests cycle over the real offline tokens; {@code most}: each request goes to a different
     * seeded session, drawn at random from all of them.
     */
    record Cell(String mode, String mix, int rate, String spread) {
        String name() {
            return mode + "-" + mix + "-" + rate + "rps" + (spread.equals(MOST) ? "-most" : "");
        }

        boolean everyRequestAnotherSession() {
            return spread.equals(MOST);
        }
    }

    private static final String MOST = "most";

    static final String VOLATILE = "--features-disabled=persistent-user-sessions";

    private final Settings settings;
    private final int seconds;
    private final Path cells;
    /** Where this run keeps its clusters' logs, a folder per mode: a later run on the same clusters overwrites theirs. */
    private final Path logs;
    /** The cell being measured. */
    private Cell cell;
    /** The mode's clusters, stock's and the provider's: every database is settled before each window. */
    private List<Prepared> clusters = List.of();

    RestartWindow(Settings settings) {
        this.settings = settings;
        this.seconds = settings.windowSeconds();
        this.cells = settings.out().resolve("restart-window");
        this.logs = cells.resolve("logs").resolve(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd-HHmm")));
    }

    void run() {
        List<Cell> matrix = new ArrayList<>();
        for (String mode : settings.windowModes()) {
            for (String mix : settings.windowMixes()) {
                for (int rate : settings.windowRates()) {
                    settings.windowSpreads().forEach(spread -> matrix.add(new Cell(mode, mix, rate, spread)));
                }
            }
        }
        for (String mode : settings.windowModes()) {
            List<Cell> todo = matrix.stream().filter(c -> c.mode().equals(mode) && !measured(c)).toList();
            matrix.stream().filter(c -> c.mode().equals(mode) && measured(c))
                    .forEach(c -> Progress.say("%s: kept from an earlier run with the same settings (%s)", c.name(), file(c, ".md")));
            if (todo.isEmpty()) {
                continue;
            }
            String build = mode.equals("volatile") ? VOLATILE : "";
            clusters = new ArrayList<>();
            try {
                if (settings.windowSetups().contains("stock")) {
                    clusters.add(prepare(RefreshLatency.STOCK, Images.keycloakWithoutProvider(Images.keycloak(), build), build));
                }
                if (settings.windowSetups().stream().anyMatch(RestartWindow::onProvidersCluster)) {
                    clusters.add(prepare(RefreshLatency.OURS, null, build));
                }
                for (Cell c : todo) {
                    cell = c;
                    warmUp();
                    List<Run> runs = new ArrayList<>();
                    // The setups take turns, repeat by repeat, so that whatever drifts over the run (the machine, the
                    // databases) spreads over every setup alike, and each repeat begins one setup later than the one
                    // before (order), so that no setup always holds the same place. A cluster's nodes are stopped
                    // while the other cluster is measured.
                    for (int r = 1; r <= settings.windowRepeat(); r++) {
                        String run = settings.windowRepeat() > 1 ? " #" + r : "";
                        for (String setup : order(settings.windowSetups(), r)) {
                            measureOnce(setup, run, runs);
                        }
                    }
                    writeCell(runs);
                }
            } finally {
                clusters.forEach(c -> c.cluster().close());
                keepLogs(mode);
                clusters = List.of();
            }
        }
        gather();
    }

    /**
     * {@code --window-warmups} windows of the cell on each cluster, with the first repeat's first setup of that cluster,
     * measured as every window is and then dropped. The untimed restart of {@link #prepare} carries no traffic, and the
     * windows after it were still a cluster's slowest: run bl (2026-11-30), persistent, refresh at 40/s, its first two
     * windows and the provider cluster's second were the three slowest in the first 40 s.
     */
    private void warmUp() {
        List<String> firstOnEach = clusters.stream().map(c -> order(settings.windowSetups(), 1).stream()
                .filter(setup -> c.ours() == onProvidersCluster(setup)).findFirst().orElseThrow()).toList();
        for (int w = 1; w <= settings.windowWarmups(); w++) {
            for (String setup : firstOnEach) {
                measureOnce(setup, " warm-up " + w, new ArrayList<>());
            }
        }
    }

    /** Gzipped copies of the mode's cluster logs (every restart of every cell, with the loaders' progress lines). */
    private void keepLogs(String mode) {
        for (Prepared prepared : clusters) {
            Path from = prepared.cluster().logDir();
            Path to = logs.resolve(mode).resolve(from.getFileName());
            try (Stream<Path> files = Files.list(from)) {
                Files.createDirectories(to);
                for (Path log : files.filter(f -> f.toString().endsWith(".log")).toList()) {
                    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(to.resolve(log.getFileName() + ".gz")))) {
                        Files.copy(log, out);
                    }
                }
                Progress.say("%s's logs kept in %s", from.getFileName(), to);
            } catch (IOException e) {
                Progress.say("%s's logs not kept: %s", from, e);
            }
        }
    }

    /**
     * The first line of a cell's file: the settings its figures were taken with. The client's protocol is among them:
     * cells measured before it was (up to run az, 2026-11-29; h2c up to run ay) are measured again.
     */
    private String settingsLine() {
        return String.format(Locale.ROOT, "<!-- %d nodes, %d sessions, %d tokens, %d s, %d repeats, setups %s, cap %d%s, client %s -->",
                RefreshLatency.NODES, settings.windowSessions(), settings.windowTokens(), seconds,
                settings.windowRepeat(), String.join(",", settings.windowSetups()), settings.windowCap(),
                (settings.windowWarmups() == 0 ? "" : ", " + settings.windowWarmups() + " warm-up windows")
                        + (settings.windowTrafficDelay() == 0 ? "" : ", traffic " + settings.windowTrafficDelay() + " s after ready")
                        + settings.windowBaselineJar().map(jar -> ", baseline jar " + jar.getFileName()).orElse(""),
                OidcClient.PROTOCOL);
    }

    private Path file(Cell c, String suffix) {
        return cells.resolve(c.name() + suffix);
    }

    /** Whether the cell was measured before, with exactly these settings. */
    private boolean measured(Cell c) {
        try {
            Path md = file(c, ".md");
            return Files.exists(md) && measuredWith(Files.readAllLines(md), settingsLine());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A seeded cluster between its windows: its nodes stopped, the tokens and the next window's access tokens at hand,
     * and the seeded sessions in a random order, each window of spread {@code most} taking the next ones.
     */
    private static final class Prepared {
        final String setup;
        final KeycloakCluster cluster;
        final Database db;
        final List<String> tokens;
        final TokenMinter minter;
        final List<String> sessions;
        int nextSession;
        List<String> access = List.of();

        Prepared(String setup, KeycloakCluster cluster, Database db, List<String> tokens, TokenMinter minter,
                 List<String> sessions) {
            this.setup = setup;
            this.cluster = cluster;
            this.db = db;
            this.tokens = tokens;
            this.minter = minter;
            this.sessions = sessions;
        }

        /**
         * Tokens of {@code count} sessions no window has used: a session refreshed in one window would be among the
         * recently refreshed in the next, which the provider loads first.
         */
        List<TokenMinter.Minted> mintForNextWindow(int count) {
            if (nextSession + count > sessions.size()) {
                throw new IllegalStateException("the " + sessions.size() + " seeded sessions are used up after "
                        + nextSession + "; raise --window-sessions or lower --window-repeat");
            }
            List<String> ids = sessions.subList(nextSession, nextSession + count);
            nextSession += count;
            return minter.mint(cluster, REALM, ids);
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
                TestRealm.addResourceServer(cluster.node(1), REALM, CLIENT); // the introspection mix's API
                tokens = RefreshLatency.login(cluster, realm, settings.windowTokens());
                seeder.seed(realm, SeedShape.simple(settings.windowSessions() - settings.windowTokens()));
            }
            try (Keycloak admin = TestRealm.admin(cluster.node(1))) {
                // The access tokens of the read mixes are fetched before each restart and must outlive its window.
                RealmRepresentation realm = admin.realm(REALM).toRepresentation();
                realm.setAccessTokenLifespan(3600);
                admin.realm(REALM).update(realm);
            }
            // The template of the minted tokens: a real login, after the lifespan above, so its access token's too.
            OidcClient.TokenResponse template = new OidcClient(cluster.node(1), REALM, CLIENT)
                    .offlineLogin(TestRealm.username(1), "password");
            if (template.status() != 200) {
                throw new IllegalStateException("template login failed: " + template);
            }
            List<String> sessions = Sql.column(cluster, "SELECT s.user_session_id FROM offline_user_session s JOIN realm r"
                    + " ON r.id = s.realm_id WHERE r.name = '" + REALM + "' AND s.offline_flag = '1'"
                    + " ORDER BY md5(s.user_session_id)");
            Prepared prepared = new Prepared(setup, cluster, new Database(cluster), tokens,
                    new TokenMinter(cluster, REALM, template), sessions);
            // One untimed restart first: a cluster's first restart after seeding ran measurably slower than its later
            // ones (2026-11-26: stock's p99 in 10-20 s 12.2 s, then 6.8 s), and would count against whichever setup
            // happens to come first. On the provider's cluster it loads, as every restart after it does, and is over
            // once every node has loaded: stopped before its quiet start ended, it loaded nothing, so the first timed
            // setup (the defaults) was the only one to follow a restart without a load (runs at and au).
            prepared.db.settle();
            if (prepared.ours()) {
                cluster.nodes().forEach(n -> n.setEnv(ADAPTIVE, "false"));
            }
            cluster.restartAll();
            if (prepared.ours()) {
                RefreshLatency.awaitLoaded(cluster);
            }
            pause(prepared);
            return prepared;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** Fetches the next window's access tokens where a read mix needs them, then stops the nodes. */
    private void pause(Prepared prepared) {
        if (settings.windowMixes().stream().anyMatch(mix -> !mix.equals("refresh"))) {
            prepared.access = accessTokens(prepared.cluster, prepared.tokens);
        }
        prepared.cluster.nodes().forEach(KeycloakNode::stopGracefully);
    }

    private static boolean onProvidersCluster(String setup) {
        return ON_PROVIDERS_CLUSTER.contains(Settings.setupBase(setup));
    }

    private void measureOnce(String named, String run, List<Run> runs) {
        Prepared prepared = clusters.stream().filter(c -> c.ours() == onProvidersCluster(named)).findFirst().orElseThrow();
        String setup = Settings.setupBase(named);
        if (setup.equals("stock-here") || setup.equals("stock-indexed")) {
            runs.add(stockHere(prepared, run, setup.equals("stock-here")));
            return;
        }
        if (!prepared.ours()) {
            runs.add(window(prepared.setup + run, prepared, false));
            pause(prepared);
            return;
        }
        boolean adaptive = !setup.equals("uncapped") && !setup.equals("fixed");
        int cap = setup.equals("fixed") ? settings.windowCap() : 0;
        // defaults: the option unset, as shipped (with persistent sessions that loads nothing); every other setup
        // but off preloads in either mode.
        String preloading = switch (setup) {
            case "defaults", "baseline" -> null;
            case "off" -> "false";
            default -> "true";
        };
        prepared.cluster.nodes().forEach(n -> {
            n.setEnv(ADAPTIVE, Boolean.toString(adaptive));
            n.setEnv(KeycloakCluster.PRELOADING, preloading);
            n.setEnv(CAP, Integer.toString(cap));
            n.setEnv(PARTICIPATING, setup.equals("idle") ? NO_NODE : "*");
            // one setup's own options, none left over from the setup measured before it on these nodes
            settings.windowSetups().forEach(other -> Settings.setupOptions(other).keySet().forEach(o -> n.setEnv(optionEnv(o), null)));
            Settings.setupOptions(named).forEach((o, value) -> n.setEnv(optionEnv(o), value));
        });
        boolean loads = preloading == null ? cell.mode().equals("volatile") : preloading.equals("true") && !setup.equals("idle");
        String own = Settings.setupOptions(named).entrySet().stream().map(e -> ", " + e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining());
        String label = prepared.setup + ", " + label(setup) + own + run;
        if (setup.equals("baseline")) {
            runs.add(baseline(prepared, label, loads));
            return;
        }
        runs.add(window(label, prepared, loads));
        pause(prepared);
    }

    /**
     * The {@code baseline} setup: its nodes started from an image with the other build's jar
     * ({@code --window-baseline-jar}), at its defaults, on the provider's cluster and database, so that two builds of
     * the provider meet on the same nodes and data (run cc could not tell its change from the machine's speed).
     */
    private Run baseline(Prepared prepared, String label, boolean loads) {
        String baseline = Images.keycloakWithProvider(settings.windowBaselineJar().orElseThrow(), null, "postgres",
                cell.mode().equals("volatile") ? VOLATILE : "");
        return onImage(prepared, baseline, label, loads);
    }

    /**
     * Stock Keycloak 26.7.4 on the provider's cluster and database: its nodes started from stock's image (the
     * provider's options in their environment, as on stock's own cluster, mean nothing to it), and the provider's
     * indexes dropped before and built again after (plain {@code CREATE INDEX} from their own definitions, while no
     * node runs; their changesets stay recorded). Against the provider's setups it leaves only the jar and its indexes
     * between them; against stock on its own cluster, only the cluster and its database. Two clusters' restarts
     * differed by more than the criterion's 10% with the same code (runs ag, ah), and in run bk's volatile long-tail
     * refresh cell every restart of the defaults and of preloading=false was above every one of stock's at 20-30 s.
     * With {@code dropIndexes} false ({@code stock-indexed}) the indexes stay, which leaves only the jar between it and
     * the provider's setups: run br could not tell the indexes' cost in the persistent refresh cell from one setup's
     * spread between restarts.
     */
    private Run stockHere(Prepared prepared, String run, boolean dropIndexes) {
        KeycloakCluster cluster = prepared.cluster;
        String stock = Images.keycloakWithoutProvider(Images.keycloak(), cell.mode().equals("volatile") ? VOLATILE : "");
        String indexes = "FROM pg_indexes WHERE indexname LIKE 'offpreload\\_%' ORDER BY indexname";
        List<String> definitions = dropIndexes ? Sql.column(cluster, "SELECT indexdef " + indexes) : List.of();
        if (dropIndexes) {
            Sql.column(cluster, "SELECT indexname " + indexes).forEach(name -> Sql.execute(cluster, "DROP INDEX " + name));
        }
        try {
            String label = RefreshLatency.STOCK + " on the provider's cluster" + (dropIndexes ? "" : ", indexes kept");
            return onImage(prepared, stock, label + run, false);
        } finally {
            definitions.forEach(definition -> Sql.execute(cluster, definition));
        }
    }

    /** One window of the provider's cluster with its nodes started from {@code image}, their own image again after. */
    private Run onImage(Prepared prepared, String image, String label, boolean loads) {
        List<KeycloakNode> nodes = prepared.cluster.nodes();
        String ours = nodes.get(0).getDockerImageName();
        nodes.forEach(node -> node.setDockerImageName(image));
        try {
            Run measured = window(label, prepared, loads);
            pause(prepared);
            return measured;
        } finally {
            nodes.forEach(node -> node.setDockerImageName(ours));
        }
    }

    /**
     * The order of the setups in repeat {@code repeat} (from 1): {@code --window-setups}' order, begun one setup later
     * with each repeat, so that over as many repeats as setups each setup is measured once in each place. Runs be and
     * bf (2026-11-29) reversed every second repeat instead, which kept the provider's defaults the second of three in
     * every repeat.
     */
    static List<String> order(List<String> setups, int repeat) {
        List<String> ordered = new ArrayList<>(setups);
        Collections.rotate(ordered, -(repeat - 1));
        return ordered;
    }

    private String label(String ours) {
        return switch (ours) {
            case "on" -> "preloading=true";
            case "off" -> "preloading=false";
            case "idle" -> "participating-nodes=" + NO_NODE;
            case "uncapped" -> "adaptive-load=false";
            case "fixed" -> "adaptive-load=false, max-sessions-per-second=" + settings.windowCap();
            case "baseline" -> "baseline " + settings.windowBaselineJar().orElseThrow().getFileName() + ", defaults";
            default -> ours;
        };
    }

    /** A fresh access token per offline token, fetched before the restart: the read mixes' lookups use them. */
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
        String setup = baseSetup;
        String mix = cell.mix();
        int perSecond = cell.rate();
        KeycloakCluster cluster = prepared.cluster;
        Database db = prepared.db;
        List<String> tokens = prepared.tokens;
        List<String> access = prepared.access;
        if (cell.everyRequestAnotherSession()) {
            List<TokenMinter.Minted> minted = prepared.mintForNextWindow(perSecond * seconds);
            tokens = minted.stream().map(TokenMinter.Minted::refreshToken).toList();
            access = minted.stream().map(TokenMinter.Minted::accessToken).toList();
        }
        List<String> refreshTokens = tokens;
        List<String> accessTokens = access;
        if (!mix.equals("refresh") && accessTokens.isEmpty()) {
            throw new IllegalStateException("Mix " + mix + " without access tokens");
        }
        // The traffic of the window before left dead tuples and dirty pages behind, in the other cluster's database
        // too, whose vacuum and checkpoint would otherwise run beside this window on the same cores.
        clusters.forEach(c -> c.db.settle());
        cluster.stopAll();
        long startBegan = System.nanoTime();
        cluster.startAgain();
        double startSeconds = (System.nanoTime() - startBegan) / 1e9;
        db.resetStatements();
        double cpuBefore = db.cpuSeconds();
        double othersBefore = otherDatabasesCpuSeconds(prepared);
        List<KeycloakNode> nodes = cluster.nodes();
        List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
        ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
        ScheduledExecutorService schedule = Executors.newSingleThreadScheduledExecutor();
        Progress.say("%s, %s: every node ready at %s, %.1f s after the first was started again", cell.name(), setup,
                LocalTime.now(), startSeconds);
        // From here on "ready" is the traffic's start: the windows, the loads and the charts count from it.
        RefreshLatency.sleep(Duration.ofSeconds(settings.windowTrafficDelay()));
        double trafficDatabaseBefore = db.cpuSeconds();
        double keycloakCpuBefore = keycloakCpuSeconds(nodes);
        long ready = System.nanoTime();
        AtomicLong loadedAt = new AtomicLong(-1);
        List<Loaded> loadedOverTime = Collections.synchronizedList(new ArrayList<>());
        int total = perSecond * seconds;
        for (int i = 0; i < total; i++) {
            int n = i;
            long dueNanos = i * 1_000_000_000L / perSecond;
            schedule.schedule(() -> callers.submit(() -> {
                long due = ready + dueNanos;
                KeycloakNode node = nodes.get(n % nodes.size());
                boolean ok = n % 4 == 0 || mix.equals("refresh") ? refresh(node, refreshTokens.get(n % refreshTokens.size()))
                        : mix.equals("introspection") ? introspect(node, accessTokens.get(n % accessTokens.size()))
                        : userinfo(node, accessTokens.get(n % accessTokens.size()));
                samples.add(new Sample(dueNanos / 1e6, (System.nanoTime() - due) / 1e6, !ok));
            }), dueNanos, TimeUnit.NANOSECONDS);
        }
        // Every setup's nodes are scraped alike while the traffic runs (stock's too, results unused).
        ScheduledExecutorService poll = Executors.newSingleThreadScheduledExecutor();
        poll.scheduleWithFixedDelay(() -> {
            try {
                List<NodeMetrics> scraped = nodes.stream().map(NodeMetrics::scrape).toList();
                loadedOverTime.add(new Loaded((System.nanoTime() - ready) / 1e9,
                        scraped.stream().mapToLong(m -> m.preloaded("loaded")).sum()));
                if (loads && loadedAt.get() < 0 && scraped.stream().allMatch(m -> m.preloadState("done"))) {
                    loadedAt.set(System.nanoTime());
                }
            } catch (RuntimeException e) {
                Progress.say("metrics not read: %s", e.getMessage());
            }
        }, 0, POLL_DURING_TRAFFIC.toMillis(), TimeUnit.MILLISECONDS);
        schedule.shutdown();
        try {
            schedule.awaitTermination(seconds + 60L, TimeUnit.SECONDS);
            callers.shutdown();
            if (!callers.awaitTermination(5, TimeUnit.MINUTES)) {
                Progress.say("%s, %s: requests still unanswered 5 min after the last was due; the CPU from ready to the "
                        + "last response is cut short there", cell.name(), setup);
            }
            poll.shutdown();
            poll.awaitTermination(1, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Traffic traffic = new Traffic(db.cpuSeconds() - trafficDatabaseBefore, keycloakCpuSeconds(nodes) - keycloakCpuBefore);
        db.topStatements(4).forEach(line -> Progress.say("%s, %s: during the traffic, db %s", cell.name(), setup, line));
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
        Run run = new Run(setup, startSeconds, List.copyOf(samples), List.copyOf(loadedOverTime), loaded, db.cpuSeconds() - cpuBefore,
                otherDatabasesCpuSeconds(prepared) - othersBefore, db.sessionTableSelects() / Math.max(1, samples.size()),
                traffic);
        String loadedLine = Double.isNaN(loaded) ? "no loader"
                : String.format(Locale.ROOT, "all loaded %.1f s after ready", loaded);
        Progress.say("%s, %s: %d requests due at %d/s for %d s, %s, database %.1f CPU-s (%.1f during the traffic), "
                + "Keycloak %.1f CPU-s during the traffic, %.2f session-row SELECTs per request", cell.name(), setup,
                samples.size(), perSecond, seconds, loadedLine, run.databaseCpuSeconds(), traffic.databaseCpuSeconds(),
                traffic.keycloakCpuSeconds(), run.selectsPerRequest());
        return run;
    }

    private static double keycloakCpuSeconds(List<KeycloakNode> nodes) {
        return nodes.stream().mapToDouble(ContainerCpu::seconds).sum();
    }

    /** CPU time the databases of the mode's other clusters have used so far: what runs beside a window. */
    private double otherDatabasesCpuSeconds(Prepared measured) {
        return clusters.stream().filter(c -> c != measured).mapToDouble(c -> c.db.cpuSeconds()).sum();
    }

    private static boolean userinfo(KeycloakNode node, String accessToken) {
        try {
            return new OidcClient(node, REALM, CLIENT).userinfo(accessToken) == 200;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static boolean introspect(KeycloakNode node, String accessToken) {
        try {
            return new OidcClient(node, REALM, CLIENT).introspect(accessToken, TestRealm.RESOURCE_SERVER,
                    TestRealm.RESOURCE_SERVER_SECRET).active();
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
        String spread = cell.everyRequestAnotherSession()
                ? "each request to another seeded session, drawn at random from all (tokens minted with the realm's keys)"
                : String.format(Locale.ROOT, "the requests cycling over %d real offline tokens", settings.windowTokens());
        out.append(String.format(Locale.ROOT, "Restart window: %d nodes, %d sessions, %s, %d requests/s "
                + "for %d s from ready%s (open model: latency from each request's scheduled start)%n%n",
                RefreshLatency.NODES, settings.windowSessions(), spread, cell.rate(), seconds,
                settings.windowTrafficDelay() == 0 ? ""
                        : " (the traffic began " + settings.windowTrafficDelay() + " s after every node was ready, "
                        + "and the windows count from then)"));
        out.append("| window after ready |");
        runs.forEach(r -> out.append(' ').append(r.setup()).append(": p50 / p99 / max ms, errors |"));
        out.append("\n|---|").append("---|".repeat(runs.size())).append('\n');
        for (int w = 0; w < windows(); w++) {
            int window = w;
            out.append(String.format(Locale.ROOT, "| %d–%d s |", w * WINDOW_SECONDS, (w + 1) * WINDOW_SECONDS));
            runs.forEach(run -> out.append(' ').append(cell(inWindow(run.samples(), window))).append(" |"));
            out.append('\n');
        }
        out.append("| whole window |");
        runs.forEach(r -> out.append(' ').append(cell(r.samples())).append(" |"));
        out.append("\n| steady from (p99 within 1.5× + 50 ms of the cell's best last 30 s) |");
        double level = steadyLevel(runs.stream().map(this::p99s).toList());
        runs.forEach(r -> out.append(' ').append(steady(steadyFrom(p99s(r), level))).append(" |"));
        out.append("\n| start: from starting the first node again until every node was ready |");
        runs.forEach(r -> out.append(String.format(Locale.ROOT, " %.1f s |", r.startSeconds())));
        out.append("\n| sessions loaded when every node was ready |");
        runs.forEach(r -> out.append(Double.isNaN(r.loadedSeconds()) || r.loaded().isEmpty() ? " – |"
                : String.format(Locale.ROOT, " %,d |", r.loaded().get(0).sessions())));
        out.append("\n| all nodes loaded after ready |");
        runs.forEach(r -> out.append(Double.isNaN(r.loadedSeconds()) ? " – |"
                : String.format(Locale.ROOT, " %.1f s |", r.loadedSeconds())));
        out.append("\n| CPU from ready to the last response: database / the Keycloak nodes together |");
        runs.forEach(r -> out.append(String.format(Locale.ROOT, " %.1f s / %.1f s |", r.traffic().databaseCpuSeconds(),
                r.traffic().keycloakCpuSeconds())));
        out.append("\n| database CPU over the window (loads included) |");
        runs.forEach(r -> out.append(String.format(Locale.ROOT, " %.1f s |", r.databaseCpuSeconds())));
        out.append("\n| the other cluster's database CPU meanwhile (idle: near 0) |");
        runs.forEach(r -> out.append(String.format(Locale.ROOT, " %.1f s |", r.otherDatabaseCpuSeconds())));
        out.append("\n| Keycloak's session-row SELECTs per request |");
        runs.forEach(r -> out.append(String.format(Locale.ROOT, " %.2f |", r.selectsPerRequest())));
        return out.append('\n').toString();
    }

    /**
     * Per setup, the median over its repeats of each 10-s window's p99: one run's p99 in the first windows varies by
     * a factor of two from restart to restart of the same setup, the median of three much less.
     */
    String medians(Map<String, List<Run>> bySetup) {
        StringBuilder out = new StringBuilder("Median over the repeats of each window's p99 (ms):\n\n| window after ready |");
        bySetup.forEach((setup, ofSetup) -> out.append(' ').append(setup).append(", ").append(ofSetup.size()).append(" runs |"));
        out.append("\n|---|").append("---|".repeat(bySetup.size())).append('\n');
        Map<String, List<Double>> p99s = new LinkedHashMap<>();
        bySetup.forEach((setup, ofSetup) -> p99s.put(setup, medianP99s(ofSetup)));
        for (int w = 0; w < windows(); w++) {
            int window = w;
            out.append(String.format(Locale.ROOT, "| %d–%d s |", w * WINDOW_SECONDS, (w + 1) * WINDOW_SECONDS));
            p99s.values().forEach(p -> out.append(' ').append(ms(p.get(window))).append(" |"));
            out.append('\n');
        }
        out.append("| whole window |");
        bySetup.values().forEach(ofSetup -> out.append(' ')
                .append(ms(median(ofSetup.stream().map(r -> p99(r.samples())).toList()))).append(" |"));
        out.append("\n| steady from |");
        double level = steadyLevel(List.copyOf(p99s.values()));
        p99s.values().forEach(p -> out.append(' ').append(steady(steadyFrom(p, level))).append(" |"));
        out.append("\n| start until every node was ready |");
        bySetup.values().forEach(ofSetup -> out.append(String.format(Locale.ROOT, " %.1f s |",
                median(ofSetup.stream().map(Run::startSeconds).toList()))));
        String first = bySetup.keySet().iterator().next();
        if (againstStock(bySetup)) {
            List<List<Double>> stockRuns = bySetup.get(first).stream().map(this::p99s).toList();
            List<Double> stockHighest = new ArrayList<>();
            for (int w = 0; w < windows(); w++) {
                int window = w;
                stockHighest.add(stockRuns.stream().mapToDouble(p -> p.get(window)).filter(v -> !Double.isNaN(v))
                        .max().orElse(Double.NaN));
            }
            out.append("\n| windows within 10% or 50 ms of stock |");
            p99s.forEach((setup, p) -> out.append(' ')
                    .append(setup.equals(first) ? "–" : againstStock(p99s.get(first), stockHighest, p)).append(" |"));
        }
        return out.append('\n').toString();
    }

    /**
     * Per window, each setup's requests pooled over its repeats, against a reference setup's ({@link PooledComparison}):
     * the pooled p99s, the 90% interval of the difference, and whether the criterion holds, fails, or cannot be decided
     * by the restarts measured. Against stock (the operator's baseline, on its own cluster and database) every other
     * setup; against {@code preloading=false} (the provider's cluster and database, nothing of the loader running: what
     * preloading itself costs, without the two clusters' difference in how fast they start, which changed from run to
     * run by more than the criterion's 10%: runs ag and ah) the provider's other setups.
     */
    String pooled(Map<String, List<Run>> bySetup, String reference) {
        boolean stock = reference.startsWith(RefreshLatency.STOCK);
        List<String> others = bySetup.keySet().stream().filter(s -> !s.equals(reference)
                && (stock || !s.startsWith(RefreshLatency.STOCK))).toList();
        StringBuilder out = new StringBuilder("Pooled over the repeats, against "
                + (stock ? "stock" : "preloading=false on the provider's own cluster and database")
                + " (each window's requests of every restart together; 90% bootstrap interval of the p99's difference to "
                + "the reference's, restarts and requests resampled; no worse: all of it within 10% or 50 ms of the "
                + "reference's pooled p99, worse: all of it above; either only where an exact rank test over the "
                + "restarts' own p99s agrees at 5%, one-sided, which takes three restarts a setup or more):"
                + "\n\n| window after ready | " + reference + ": pooled p99 |");
        others.forEach(setup -> out.append(' ').append(setup)
                .append(": pooled p99, difference (90%), the restarts' rank p, verdict |"));
        out.append("\n|---|---|").append("---|".repeat(others.size())).append('\n');
        Map<String, Map<PooledComparison.Verdict, Integer>> counts = new LinkedHashMap<>();
        for (int w = 0; w < windows(); w++) {
            List<List<Double>> referenceRuns = latencies(bySetup.get(reference), w);
            out.append(String.format(Locale.ROOT, "| %d–%d s | %s |", w * WINDOW_SECONDS, (w + 1) * WINDOW_SECONDS,
                    ms(PooledComparison.pooledP99(referenceRuns))));
            for (String setup : others) {
                PooledComparison.Result r = PooledComparison.compare(referenceRuns, latencies(bySetup.get(setup), w));
                counts.computeIfAbsent(setup, k -> new EnumMap<>(PooledComparison.Verdict.class))
                        .merge(r.verdict(), 1, Integer::sum);
                out.append(String.format(Locale.ROOT, " %s, %s to %s, %s, %s |", ms(r.candidateP99()), signedMs(r.low()),
                        signedMs(r.high()), Double.isNaN(r.restartsP()) ? "–" : String.format(Locale.ROOT, "%.2f", r.restartsP()),
                        r.verdict()));
            }
            out.append('\n');
        }
        out.append("| windows | |");
        counts.values().forEach(c -> out.append(String.format(Locale.ROOT, " %d no worse, %d worse, %d not decided |",
                c.getOrDefault(PooledComparison.Verdict.NO_WORSE, 0), c.getOrDefault(PooledComparison.Verdict.WORSE, 0),
                c.getOrDefault(PooledComparison.Verdict.NOT_DECIDED, 0))));
        return out.append('\n').toString();
    }

    /** The provider's setup with preloading=false, where the cell has it beside another of the provider's setups. */
    private static Optional<String> preloadingOff(Map<String, List<Run>> bySetup) {
        Optional<String> off = bySetup.keySet().stream().filter(s -> s.endsWith(", preloading=false")).findFirst();
        long providers = bySetup.keySet().stream().filter(s -> !s.startsWith(RefreshLatency.STOCK)).count();
        return providers > 1 ? off : Optional.empty();
    }

    /** Whether stock was measured first in the cell, beside at least one of the provider's setups. */
    private static boolean againstStock(Map<String, List<Run>> bySetup) {
        return bySetup.size() > 1 && bySetup.keySet().iterator().next().startsWith(RefreshLatency.STOCK);
    }

    /** Per run, the latencies (ms) of the window's successful requests. */
    private static List<List<Double>> latencies(List<Run> runs, int window) {
        return runs.stream().map(r -> inWindow(r.samples(), window).stream().filter(s -> !s.failed())
                .map(Sample::latencyMillis).toList()).toList();
    }

    private static String signedMs(double millis) {
        return Double.isNaN(millis) ? "–" : (millis >= 0 ? "+" : "−") + ms(Math.abs(millis));
    }

    /**
     * The issue's criterion of "no worse than stock" for one setup: in how many 10-s windows its median p99 is at
     * most 10% above stock's median, or within 50 ms of it; and for each window that is not, whether one of stock's
     * own restarts reached as high, in which case three restarts per setup do not tell the two apart there.
     */
    static String againstStock(List<Double> stock, List<Double> stockHighest, List<Double> setup) {
        int within = 0;
        int windows = 0;
        List<String> above = new ArrayList<>();
        for (int w = 0; w < setup.size(); w++) {
            double theirs = stock.get(w);
            double ours = setup.get(w);
            if (Double.isNaN(theirs) || Double.isNaN(ours)) {
                continue;
            }
            windows++;
            if (ours <= Math.max(1.1 * theirs, theirs + 50)) {
                within++;
            } else {
                above.add(String.format(Locale.ROOT, "%d–%d s (%s)", w * WINDOW_SECONDS, (w + 1) * WINDOW_SECONDS,
                        ours <= stockHighest.get(w) ? "one of stock's runs reached " + ms(stockHighest.get(w))
                                : "above every run of stock's"));
            }
        }
        return within + " of " + windows + (above.isEmpty() ? "" : "; above: " + String.join(", ", above));
    }

    private int windows() {
        return (seconds + WINDOW_SECONDS - 1) / WINDOW_SECONDS;
    }

    private static List<Sample> inWindow(List<Sample> samples, int window) {
        double from = window * WINDOW_SECONDS * 1000.0;
        double to = from + WINDOW_SECONDS * 1000.0;
        return samples.stream().filter(s -> s.dueMillis() >= from && s.dueMillis() < to).toList();
    }

    private List<Double> p99s(Run run) {
        List<Double> p99s = new ArrayList<>();
        for (int w = 0; w < windows(); w++) {
            p99s.add(p99(inWindow(run.samples(), w)));
        }
        return p99s;
    }

    private List<Double> medianP99s(List<Run> ofSetup) {
        List<List<Double>> each = ofSetup.stream().map(this::p99s).toList();
        List<Double> medians = new ArrayList<>();
        for (int w = 0; w < windows(); w++) {
            int window = w;
            medians.add(median(each.stream().map(p -> p.get(window)).toList()));
        }
        return medians;
    }

    /** Sessions loaded per second in each 10-s window, from the polled totals (linear between two polls). */
    static List<Double> loadRates(List<Loaded> loaded, int windows) {
        List<Double> rates = new ArrayList<>();
        for (int w = 0; w < windows; w++) {
            rates.add((loadedAt(loaded, (w + 1) * WINDOW_SECONDS) - loadedAt(loaded, w * WINDOW_SECONDS)) / WINDOW_SECONDS);
        }
        return rates;
    }

    private static double loadedAt(List<Loaded> loaded, double seconds) {
        Loaded before = null;
        for (Loaded l : loaded) {
            if (l.seconds() >= seconds) {
                return before == null ? l.sessions() : before.sessions() + (l.sessions() - before.sessions())
                        * (seconds - before.seconds()) / (l.seconds() - before.seconds());
            }
            before = l;
        }
        return before == null ? 0 : before.sessions();
    }

    /**
     * The steady level of a cell: the lowest, over its runs, of the median p99 of their last three windows. A run
     * whose backlog never drained ends far above it; taking each run's own tail would call that run steady.
     */
    static double steadyLevel(List<List<Double>> p99sOfEachRun) {
        return p99sOfEachRun.stream().map(p -> median(p.subList(Math.max(0, p.size() - 3), p.size())))
                .filter(v -> !Double.isNaN(v)).min(Double::compare).orElse(Double.NaN);
    }

    /**
     * The first window from which every window's p99 stays within 1.5 times the steady level plus 50 ms: when the
     * restart's backlog has drained. -1 when it never does within the window, or the p99s are unknown.
     */
    static int steadyFrom(List<Double> p99s, double level) {
        double bound = 1.5 * level + 50;
        int from = p99s.size();
        while (from > 0 && p99s.get(from - 1) <= bound) {
            from--;
        }
        return Double.isNaN(bound) || from == p99s.size() ? -1 : from;
    }

    private static String steady(int window) {
        return window < 0 ? "not within the window" : window * WINDOW_SECONDS + " s";
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

    /** The cell's tables and chart, written as soon as it is measured. */
    private void writeCell(List<Run> runs) {
        Map<String, List<Run>> bySetup = new LinkedHashMap<>();
        runs.forEach(r -> bySetup.computeIfAbsent(r.setup().replaceAll(" #\\d+", ""), k -> new ArrayList<>()).add(r));
        String tables = table(runs) + (settings.windowRepeat() > 1 ? "\n" + medians(bySetup) : "")
                + (againstStock(bySetup) ? "\n" + pooled(bySetup, bySetup.keySet().iterator().next()) : "")
                + preloadingOff(bySetup).map(off -> "\n" + pooled(bySetup, off)).orElse("");
        Progress.say("%n%s", tables);
        try {
            Files.createDirectories(cells);
            chart(bySetup, file(cell, ".png"));
            writeSamples(runs, file(cell, "-samples.csv.gz"));
            Files.writeString(file(cell, ".md"), settingsLine() + "\n### " + cell.mode() + " sessions, " + cell.mix() + ", "
                    + cell.rate() + " requests/s" + (cell.everyRequestAnotherSession() ? ", each to another session" : "")
                    + " (measured " + LocalDate.now() + ")\n\n" + tables + "\n![" + cell.name()
                    + "](" + cell.name() + ".png)\n");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every request of the cell, for analyses the tables do not make: setup and repeat, due (ms after ready), latency (ms), failed. */
    private static void writeSamples(List<Run> runs, Path csvGz) throws IOException {
        try (Writer out = new OutputStreamWriter(new GZIPOutputStream(Files.newOutputStream(csvGz)), StandardCharsets.UTF_8)) {
            out.write("setup,due_ms,latency_ms,failed\n");
            for (Run run : runs) {
                // Quoted as CSV quotes: a setup's name has commas ("with this provider, defaults #1").
                String setup = '"' + run.setup().replace("\"", "\"\"") + '"';
                for (Sample s : run.samples()) {
                    out.write(String.format(Locale.ROOT, "%s,%.1f,%.1f,%b\n", setup, s.dueMillis(), s.latencyMillis(),
                            s.failed()));
                }
            }
        }
    }

    /**
     * One image, two charts on one time axis: above, each setup's p99 per window (the median over the repeats; log
     * scale, a restart's first windows are seconds and steady state tens of milliseconds); below, the sessions the
     * loaders of each of the provider's setups loaded per second in each window, all nodes together.
     */
    private void chart(Map<String, List<Run>> bySetup, Path png) throws IOException {
        double[] x = new double[windows()];
        for (int w = 0; w < x.length; w++) {
            x[w] = w * WINDOW_SECONDS + WINDOW_SECONDS / 2.0;
        }
        XYChart latency = new XYChartBuilder().width(1000).height(420).title(cell.name() + ": p99 per 10-s window")
                .xAxisTitle("seconds after every node was ready").yAxisTitle("p99 (ms)").build();
        latency.getStyler().setYAxisLogarithmic(true);
        latency.getStyler().setYAxisDecimalPattern("#,##0");
        XYChart loaders = new XYChartBuilder().width(1000).height(300)
                .title("loaders' rate after ready (loaded before it: see the cell's table)")
                .xAxisTitle("seconds after every node was ready").yAxisTitle("sessions/s, all nodes").build();
        loaders.getStyler().setYAxisDecimalPattern("#,##0");
        int i = 0;
        for (Map.Entry<String, List<Run>> entry : bySetup.entrySet()) {
            String setup = entry.getKey();
            List<Run> ofSetup = entry.getValue();
            // A setup keeps its colour and marker in both charts (the loaders' has no stock).
            Color color = latency.getStyler().getSeriesColors()[i % latency.getStyler().getSeriesColors().length];
            Marker marker = latency.getStyler().getSeriesMarkers()[i % latency.getStyler().getSeriesMarkers().length];
            i++;
            style(latency.addSeries(setup, x, medianP99s(ofSetup).stream()
                    .mapToDouble(v -> Double.isNaN(v) ? 1 : Math.max(1, v)).toArray()), color, marker);
            if (!ofSetup.get(0).loaded().isEmpty() && !setup.startsWith(RefreshLatency.STOCK)) {
                List<List<Double>> rates = ofSetup.stream().map(r -> loadRates(r.loaded(), x.length)).toList();
                style(loaders.addSeries(setup, x, IntStream.range(0, x.length)
                        .mapToDouble(w -> median(rates.stream().map(r -> r.get(w)).toList())).toArray()), color, marker);
            }
        }
        BufferedImage top = BitmapEncoder.getBufferedImage(latency);
        BufferedImage image = top;
        if (!loaders.getSeriesMap().isEmpty()) {
            BufferedImage bottom = BitmapEncoder.getBufferedImage(loaders);
            image = new BufferedImage(top.getWidth(), top.getHeight() + bottom.getHeight(), BufferedImage.TYPE_INT_RGB);
            Graphics2D g = image.createGraphics();
            g.drawImage(top, 0, 0, null);
            g.drawImage(bottom, 0, top.getHeight(), null);
            g.dispose();
        }
        ImageIO.write(image, "png", png.toFile());
    }

    private static void style(XYSeries series, Color color, Marker marker) {
        series.setLineColor(color);
        series.setMarkerColor(color);
        series.setMarker(marker);
    }

    /**
     * restart-window.md: every cell in the folder measured with these settings, whichever run measured it (a run
     * names only the cells it was asked for, and the matrix fills over several runs), in the order of their names.
     */
    private void gather() {
        try {
            Files.writeString(settings.out().resolve("restart-window.md"), gathered(cells, settingsLine()));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A cell's file begins with the line of the settings it was measured with. */
    private static boolean measuredWith(List<String> cellFile, String settingsLine) {
        return !cellFile.isEmpty() && cellFile.get(0).equals(settingsLine);
    }

    static String gathered(Path cells, String settingsLine) throws IOException {
        StringBuilder all = new StringBuilder("# Restart window\n\nOne section per cell (mode, mix, rate, spread); each was "
                + "measured with every setup side by side, on the date it gives.\n\n");
        List<Path> measured;
        try (Stream<Path> files = Files.list(cells)) {
            measured = files.filter(f -> f.getFileName().toString().endsWith(".md")).sorted().toList();
        }
        for (Path md : measured) {
            List<String> lines = Files.readAllLines(md);
            if (measuredWith(lines, settingsLine)) {
                String png = md.getFileName().toString().replaceFirst("\\.md$", ".png");
                all.append(String.join("\n", lines.subList(1, lines.size()))
                        .replace("](" + png + ")", "](restart-window/" + png + ")")).append("\n\n");
            }
        }
        return all.toString();
    }
}
