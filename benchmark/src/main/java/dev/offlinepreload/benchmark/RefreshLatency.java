package dev.offlinepreload.benchmark;

import static dev.offlinepreload.testsuite.cluster.KeycloakCluster.optionEnv;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;

import dev.offlinepreload.testsuite.cluster.Images;
import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder.Realm;
import dev.offlinepreload.testsuite.db.SeedShape;
import dev.offlinepreload.testsuite.keycloak.NodeMetrics;
import dev.offlinepreload.testsuite.keycloak.OidcClient;
import dev.offlinepreload.testsuite.keycloak.TestRealm;

/**
 * Phases d and e, what users feel: three nodes restarted together, then every real offline token refreshed once
 * (the first refresh after the restart) and once more (steady state), with stock Keycloak 26.7.4 and with this
 * provider; then, with the provider and the large data set, the cluster's formation and load time, and refresh
 * latency while the nodes load.
 */
final class RefreshLatency {

    static final String STOCK = "Keycloak 26.7.4 (stock)";
    static final String OURS = "with this provider";
    static final int NODES = 3;
    static final int USERS = 1000;
    private static final int CONCURRENCY = 8;
    private static final String CLIENT = "app-1";
    /** Refreshes (on other sessions) that let a restarted JVM compile its hot paths before the measured ones. */
    private static final int JIT_WARMUP = 1000;
    /**
     * Sessions per second and node in the rate-capped load: a third of 1M then takes about 170 s per node. It must be
     * below the uncapped rate to mean anything: on 2 shared cores each of 3 nodes loads about 5,300/s uncapped, and
     * the 2026-11-23 run's cap of 10,000 did not bind.
     */
    static final int RATE_CAP = 2_000;

    /** One pass of refreshes over every token. */
    record Pass(String setup, String when, Latencies latencies, double selectsPerRefresh, double rowsPerRefresh,
                double missesPerRefresh) {
    }

    /**
     * @param sessions        offline sessions in the database
     * @param restartSeconds  stop all nodes, start all, until every node is ready and sees the others
     * @param loadedSeconds   from ready until every node finished its first pass (NaN for stock)
     * @param nodePassSeconds each node's last pass duration
     */
    record Formation(int sessions, double restartSeconds, double loadedSeconds, List<Double> nodePassSeconds) {
    }

    private final Settings settings;
    private final List<Pass> passes = new ArrayList<>();
    private final List<Formation> formations = new ArrayList<>();

    RefreshLatency(Settings settings) {
        this.settings = settings;
    }

    List<Pass> passes() {
        return passes;
    }

    List<Formation> formations() {
        return formations;
    }

    void run() {
        measure(STOCK, Images.keycloakWithoutProvider(Images.keycloak(), ""));
        measure(OURS, null);
    }

    /**
     * The 3-node cluster of the restart measurements: offline caches that hold {@code sessions} with a quarter to
     * spare, {@code image} for stock Keycloak or null for this provider.
     */
    static KeycloakCluster.Builder cluster(String name, int sessions, Settings settings, String image) {
        int maxCount = sessions * 5 / 4;
        KeycloakCluster.Builder builder = KeycloakCluster.builder(name + "-" + (image == null ? "ours" : "stock"))
                .nodes(NODES).pgStatStatements().sharedBuffers(settings.sharedBuffers()).heap("-Xms2g -Xmx2g")
                .env("KC_LOG_LEVEL", "INFO")
                .env("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT", Integer.toString(maxCount))
                .env("KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT", Integer.toString(maxCount))
                .env(optionEnv("expected-cluster-size"), Integer.toString(NODES));
        if (image != null) {
            builder.keycloakImage(image);
        }
        return builder;
    }

    private void measure(String setup, String image) {
        int sessions = Math.max(settings.refreshSessions(), settings.clusterSessions());
        try (KeycloakCluster cluster = cluster("benchmark-refresh", sessions, settings, image).build().start()) {
            Database db = new Database(cluster);
            boolean ours = image == null;
            if (ours) {
                awaitLoaded(cluster);
                formations.add(formation(cluster, db));
            }
            Realm realm;
            List<String> tokens;
            try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
                realm = seeder.createRealm(cluster.node(1), "refresh", 1, USERS);
                tokens = login(cluster, realm, settings.refreshTokens() + JIT_WARMUP);
                int clones = settings.refreshSessions() - (int) db.offlineSessions();
                seeder.seed(realm, SeedShape.simple(clones));
            }
            db.settle();
            Progress.say("%s: %d real offline tokens, %d sessions in the database", setup, tokens.size(), db.offlineSessions());

            cluster.restartAll();
            if (ours) {
                awaitLoaded(cluster);
            }
            // A fresh JVM answers its first requests slowly whatever the cache holds: the first JIT_WARMUP tokens
            // show that, the others then show what the cache does.
            passes.add(refreshPass(setup, "first " + JIT_WARMUP + " refreshes (cold JVM)", cluster, db,
                    tokens.subList(0, JIT_WARMUP)));
            List<String> measured = tokens.subList(JIT_WARMUP, tokens.size());
            passes.add(refreshPass(setup, "first refresh after a full restart", cluster, db, measured));
            passes.add(refreshPass(setup, "second refresh (steady state)", cluster, db, measured));

            if (ours && settings.clusterSessions() > settings.refreshSessions()) {
                try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
                    seeder.seed(realm, SeedShape.simple(settings.clusterSessions() - (int) db.offlineSessions()));
                }
                db.settle();
                formations.add(formation(cluster, db));
                // Refreshes back to back leave a node no quiet second, so at the defaults the load would wait five
                // minutes and then crawl at its floor (the 2026-11-28 full run stalled here): these passes measure
                // what a load that does not yield costs the requests. The defaults under traffic: --phases=window.
                cluster.nodes().forEach(n -> n.setEnv(RestartWindow.ADAPTIVE, "false"));
                passes.addAll(refreshDuringLoad(setup, cluster, db, tokens.subList(JIT_WARMUP, tokens.size()), ""));
                // The same with the rate cap an operator sets to keep request latency untouched while loading.
                cluster.nodes().forEach(n -> n.setEnv(RestartWindow.CAP, Integer.toString(RATE_CAP)));
                passes.addAll(refreshDuringLoad(setup, cluster, db, tokens.subList(JIT_WARMUP, tokens.size()),
                        " at max-sessions-per-second=" + RATE_CAP));
                cluster.nodes().forEach(n -> n.setEnv(RestartWindow.CAP, "0"));
                cluster.nodes().forEach(n -> n.setEnv(RestartWindow.ADAPTIVE, "true"));
            }
        }
    }

    /** Restarts the whole cluster without traffic and times it until ready and until loaded. */
    private Formation formation(KeycloakCluster cluster, Database db) {
        int sessions = (int) db.offlineSessions();
        long start = System.nanoTime();
        cluster.restartAll();
        double ready = (System.nanoTime() - start) / 1e9;
        long readyAt = System.nanoTime();
        awaitLoaded(cluster);
        double loaded = (System.nanoTime() - readyAt) / 1e9;
        List<Double> perNode = cluster.nodes().stream()
                .map(n -> NodeMetrics.scrape(n).value("keycloak_offline_preload_last_pass_seconds")).toList();
        Formation f = new Formation(sessions, ready, loaded, perNode);
        Progress.say("formation with %d sessions: ready after %.1f s, loaded %.1f s later, passes %s", sessions, ready, loaded, perNode);
        return f;
    }

    /** Restarts the cluster and refreshes from the moment it is ready, tagging each request by whether a node was loading. */
    private List<Pass> refreshDuringLoad(String setup, KeycloakCluster cluster, Database db, List<String> tokens, String rate) {
        cluster.restartAll();
        AtomicBoolean loading = new AtomicBoolean(true);
        AtomicBoolean stop = new AtomicBoolean();
        List<Double> during = Collections.synchronizedList(new ArrayList<>());
        List<Double> after = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger failures = new AtomicInteger();
        List<KeycloakNode> nodes = cluster.nodes();
        long start = System.nanoTime();
        ExecutorService pool = inParallel(i -> !stop.get(), i -> {
            boolean duringLoad = loading.get();
            double ms = refresh(nodes.get(i % nodes.size()), tokens.get(i % tokens.size()), failures);
            if (ms >= 0) {
                (duringLoad && loading.get() ? during : after).add(ms);
            }
        });
        awaitLoaded(cluster);
        loading.set(false);
        double loadSeconds = (System.nanoTime() - start) / 1e9;
        long afterStart = System.nanoTime();
        sleep(Duration.ofSeconds(Math.max(15, (long) loadSeconds)));
        stop.set(true);
        shutdown(pool);
        double afterSeconds = (System.nanoTime() - afterStart) / 1e9;
        Pass whileLoading = new Pass(setup, "while " + NODES + " nodes load " + Report.sessionsLabel((int) db.offlineSessions())
                + " sessions" + rate,
                new Latencies(during, failures.get(), loadSeconds), Double.NaN, Double.NaN, Double.NaN);
        Pass idle = new Pass(setup, "right after that load" + rate + " (idle)", new Latencies(after, 0, afterSeconds),
                Double.NaN, Double.NaN, Double.NaN);
        Progress.say("%s: during load %s; after %s", setup, whileLoading.latencies(), idle.latencies());
        return List.of(whileLoading, idle);
    }

    private Pass refreshPass(String setup, String when, KeycloakCluster cluster, Database db, List<String> tokens) {
        List<KeycloakNode> nodes = cluster.nodes();
        db.resetStatements();
        long missesBefore = nodes.stream().mapToLong(n -> NodeMetrics.scrape(n).misses("offlineSessions")).sum();
        List<Double> millis = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger failures = new AtomicInteger();
        long start = System.nanoTime();
        shutdown(inParallel(i -> i < tokens.size(), i -> {
            double ms = refresh(nodes.get(i % nodes.size()), tokens.get(i), failures);
            if (ms >= 0) {
                millis.add(ms);
            }
        }));
        double seconds = (System.nanoTime() - start) / 1e9;
        long misses = nodes.stream().mapToLong(n -> NodeMetrics.scrape(n).misses("offlineSessions")).sum() - missesBefore;
        Pass pass = new Pass(setup, when, new Latencies(millis, failures.get(), seconds),
                db.sessionTableSelects() / tokens.size(), db.sessionTableRowsRead() / tokens.size(),
                (double) misses / tokens.size());
        Progress.say("%s, %s: %s, %.2f selects, %.2f rows, %.2f cache misses per refresh", setup, when, pass.latencies(),
                pass.selectsPerRefresh(), pass.rowsPerRefresh(), pass.missesPerRefresh());
        return pass;
    }

    /** @return the latency in ms, or -1 if the refresh failed */
    private static double refresh(KeycloakNode node, String token, AtomicInteger failures) {
        long start = System.nanoTime();
        try {
            OidcClient.TokenResponse response = new OidcClient(node, "refresh", CLIENT).refresh(token);
            if (response.status() == 200) {
                return (System.nanoTime() - start) / 1e6;
            }
        } catch (RuntimeException e) {
            // counted below
        }
        failures.incrementAndGet();
        return -1;
    }

    /** {@code count} offline logins of the realm's users to app-1, spread over the nodes; their refresh tokens. */
    static List<String> login(KeycloakCluster cluster, Realm realm, int count) {
        List<String> tokens = Collections.synchronizedList(new ArrayList<>());
        List<KeycloakNode> nodes = cluster.nodes();
        shutdown(inParallel(i -> i < count, i -> {
            OidcClient.TokenResponse login = new OidcClient(nodes.get(i % nodes.size()), realm.name(), CLIENT)
                    .offlineLogin(TestRealm.username(i % USERS + 1), "password");
            if (login.status() != 200) {
                throw new IllegalStateException("login failed: " + login);
            }
            tokens.add(login.refreshToken());
        }));
        if (tokens.size() != count) {
            throw new IllegalStateException("only " + tokens.size() + " of " + count + " logins succeeded");
        }
        return new ArrayList<>(tokens);
    }

    /** task(0), task(1), ... on CONCURRENCY threads, each taking the next index while {@code more} allows it. */
    private static ExecutorService inParallel(IntPredicate more, IntConsumer task) {
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(CONCURRENCY);
        for (int t = 0; t < CONCURRENCY; t++) {
            pool.submit(() -> {
                for (int i = next.getAndIncrement(); more.test(i); i = next.getAndIncrement()) {
                    task.accept(i);
                }
            });
        }
        return pool;
    }

    static void awaitLoaded(KeycloakCluster cluster) {
        BooleanSupplier allDone = () -> cluster.nodes().stream().allMatch(n -> NodeMetrics.scrape(n).preloadState("done"));
        await("every node loaded").atMost(Duration.ofMinutes(20)).pollInterval(Duration.ofMillis(200))
                .until(allDone::getAsBoolean);
    }

    private static void shutdown(ExecutorService pool) {
        pool.shutdown();
        try {
            if (!pool.awaitTermination(30, TimeUnit.MINUTES)) {
                throw new IllegalStateException("refresh workers did not finish");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The benchmark's one sleep: an interrupt ends the run. */
    static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
