package dev.offlinepreload.benchmark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What to measure. Defaults are the full run; {@code --quick} is the iteration run: one size (1M), this provider at
 * its defaults and the raw read only, a few minutes. Arguments: {@code --key=value}, lists comma-separated, e.g.
 * {@code --sizes=250000,1000000 --batches=64,8192}; {@code --jfr=SECONDS} records a JFR profile of the first SECONDS
 * of every node start with this provider (in the window phase: of every node of every window) into the results
 * folder; {@code --client-sessions=N} (N > 1) adds a load of the largest size with N client sessions per session, by
 * both loaders; {@code --shared-buffers=SIZE} is PostgreSQL's
 * {@code shared_buffers}; {@code --jvm-options=-XX:MaxTenuringThreshold=0,...} (comma-separated) are appended to the JVM
 * options of this provider's nodes, to see what a JVM setting changes (Keycloak 24's nodes keep theirs; another
 * collector, e.g. {@code -XX:+UseParallelGC}, replaces Keycloak's G1, and then no live heap is read);
 * {@code --provider-options=quiet-start-seconds=0,...} (comma-separated {@code option=value}) set this provider's options
 * on every node of the {@code ours} phase, both loads of each no-traffic pair included (the window phase keeps its
 * setups). Phases:
 * {@code ours}, {@code kc24}, {@code refresh} ({@code loaders} = the first two); {@code planning} only when asked
 * ({@link PlanningScale}: {@code --planning-sizes}, default 1M and 10M, with offline caches of
 * {@code --planning-max-count} entries, default 1M); {@code window} only when asked ({@link RestartWindow}: a full
 * restart of 3 nodes holding {@code --window-sessions} (default 300,000) under each of {@code --window-rates}
 * requests per second (default 40) over {@code --window-tokens} real offline tokens (default 2,000) for {@code --window-seconds}
 * (default 120), in each of {@code --window-modes} (default persistent,volatile), for each of {@code --window-setups}
 * (default stock,defaults,uncapped,fixed, the last at max-sessions-per-second={@code --window-cap}, default 2,000,
 * with adaptive-load=false; also {@code on}: the defaults with preloading=true, what the defaults were with persistent
 * sessions until 2026-11-30; {@code off}: the jar installed with preloading=false; and {@code idle}: {@code on} with
 * participating-nodes naming no node, so that every node opens what {@code on} opens but none loads; and
 * {@code stock-here}: stock Keycloak on the provider's cluster and database, the provider's indexes dropped for its
 * windows, so that stock and the provider meet on the same nodes and data; {@code stock-indexed}: the same with the
 * provider's indexes kept, so that only the jar differs from {@code off}; a provider's setup followed by
 * {@code +option=value} pairs gives its nodes those options too, e.g. {@code defaults+hold-readiness=false}; and
 * {@code baseline}: the provider jar {@code --window-baseline-jar=PATH}, another build such as an earlier commit's, at
 * its defaults on the provider's cluster, so that two builds meet on the same nodes and data), with each of
 * {@code --window-mixes} (default refresh,introspection: refreshes only, or three of four requests introspecting an
 * access token; read-heavy: the same with userinfo calls), with each of {@code --window-spread} (default few,most:
 * the requests cycle over the real tokens, a few percent of the sessions, or each goes to a different seeded session
 * drawn at random from them all, with tokens minted with the realm's keys), each window {@code --window-repeat}
 * times (default 1), the setups in their order in the first repeat and each later repeat begun one setup later; a cell already measured with the same settings is kept, not rerun;
 * before a cell's first repeat, {@code --window-warmups} unmeasured windows of the cell on each cluster (default 0),
 * so that a cluster's first windows, its slowest, count against no setup;
 * {@code --window-traffic-delay} seconds after every node is ready (default 0) before the traffic begins, as a load
 * balancer that admits a node only some checks after it is ready; the windows count from the traffic's start). With {@code ours}, {@code --other-minors} (default: the older Keycloak
 * minors the testsuite runs on, e.g. 26.5.6; empty for none) adds the largest size at the defaults and with
 * adaptive-load=false on a node of each of those Keycloak versions, in the same run; {@code --no-traffic-pairs} (default
 * 1) measures that pair of loads (the defaults, adaptive-load=false) so many times on each version, each pair in the
 * other order than the one before; {@code --ours-mode} (default persistent) is the session mode of those nodes: with
 * persistent sessions they load with preloading=true, with volatile ones at the shipped preloading=auto.
 */
record Settings(List<Integer> sizes, List<Integer> batches, List<Integer> workers, List<Integer> kc24Segments,
                int refreshTokens, int refreshSessions, int clusterSessions, String heap, Path out,
                List<String> phases, int jfrSeconds, int clientSessions, String sharedBuffers,
                List<String> jvmOptions, Map<String, String> providerOptions, List<Integer> planningSizes,
                int planningMaxCount, int windowSessions,
                int windowTokens, List<Integer> windowRates, int windowSeconds, List<String> windowModes,
                List<String> windowSetups, List<String> windowMixes, List<String> windowSpreads, int windowRepeat,
                int windowWarmups, int windowCap, int windowTrafficDelay, Optional<Path> windowBaselineJar,
                List<String> otherMinors, int noTrafficPairs, String oursMode) {

    /**
     * PostgreSQL's buffers as a production server sizes them (PostgreSQL's guide: a quarter of the memory of a
     * dedicated server; this is a sixth of this 24 GiB machine). They hold the session tables of the 1M runs, so
     * reads by key hit PostgreSQL's own buffers instead of copying each 8 kB page in from the OS cache.
     */
    static final String SHARED_BUFFERS = "4GB";
    /** The window's setups that run stock Keycloak, which takes no provider options. */
    private static final List<String> STOCK_SETUPS = List.of("stock", "stock-here", "stock-indexed");

    static Settings parse(String[] args) {
        boolean quick = Arrays.asList(args).contains("--quick");
        int cpus = Runtime.getRuntime().availableProcessors();
        Map<String, String> options = new LinkedHashMap<>();
        options.put("sizes", quick ? "1000000" : "250000,1000000");
        options.put("batches", quick ? Integer.toString(Report.DEFAULT_BATCH) : "1000,4000,8192");
        int workers = Report.defaultWorkers();
        options.put("workers", quick ? Integer.toString(workers) : cpus + "," + workers + "," + 2 * workers);
        options.put("kc24-segments", "64,1024,2048");
        options.put("refresh-tokens", "10000");
        options.put("refresh-sessions", "100000");
        options.put("cluster-sessions", "1000000");
        options.put("heap", "4g");
        options.put("out", Path.of("benchmark", "results").toString());
        options.put("phases", quick ? "ours" : "ours,kc24,refresh");
        options.put("jfr", "0");
        options.put("client-sessions", quick ? "1" : "3");
        options.put("shared-buffers", SHARED_BUFFERS);
        options.put("jvm-options", "");
        options.put("provider-options", "");
        options.put("planning-sizes", "1000000,10000000");
        options.put("planning-max-count", "1000000");
        options.put("window-sessions", "300000");
        options.put("window-tokens", "2000");
        options.put("window-rates", "40");
        options.put("window-seconds", "120");
        options.put("window-modes", "persistent,volatile");
        options.put("window-setups", "stock,defaults,uncapped,fixed");
        options.put("window-mixes", "refresh,introspection");
        options.put("window-spread", "few,most");
        options.put("window-repeat", "1");
        options.put("window-warmups", "0");
        options.put("window-cap", Integer.toString(RefreshLatency.RATE_CAP));
        options.put("window-traffic-delay", "0");
        options.put("window-baseline-jar", "");
        // The older Keycloak minors the testsuite runs on (root pom): this provider's defaults load there too.
        options.put("other-minors", System.getProperty("offlinepreload.olderMinors", ""));
        options.put("no-traffic-pairs", "1");
        options.put("ours-mode", "persistent");
        for (String arg : args) {
            if (arg.equals("--quick") || arg.isBlank()) {
                continue;
            }
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("Unknown argument '" + arg + "'; expected --key=value or --quick");
            }
            String key = arg.substring(2, eq);
            if (!options.containsKey(key)) {
                throw new IllegalArgumentException("Unknown option --" + key + "; known: " + options.keySet());
            }
            options.put(key, arg.substring(eq + 1));
        }
        List<String> setups = windowSetups(options.get("window-setups"));
        return new Settings(ints(options.get("sizes")), ints(options.get("batches")), ints(options.get("workers")),
                ints(options.get("kc24-segments")), Integer.parseInt(options.get("refresh-tokens")),
                Integer.parseInt(options.get("refresh-sessions")), Integer.parseInt(options.get("cluster-sessions")),
                options.get("heap"), Path.of(options.get("out")), List.of(options.get("phases").split(",")),
                Integer.parseInt(options.get("jfr")), Integer.parseInt(options.get("client-sessions")),
                options.get("shared-buffers"), Arrays.stream(options.get("jvm-options").split(",")).map(String::trim)
                .filter(o -> !o.isEmpty()).toList(), providerOptions(options.get("provider-options")),
                ints(options.get("planning-sizes")),
                Integer.parseInt(options.get("planning-max-count")), Integer.parseInt(options.get("window-sessions")),
                Integer.parseInt(options.get("window-tokens")), ints(options.get("window-rates")),
                Integer.parseInt(options.get("window-seconds")),
                oneOf("window-modes", options.get("window-modes"), "persistent", "volatile"),
                setups,
                oneOf("window-mixes", options.get("window-mixes"), "refresh", "read-heavy", "introspection"),
                oneOf("window-spread", options.get("window-spread"), "few", "most"), Integer.parseInt(options.get("window-repeat")),
                Integer.parseInt(options.get("window-warmups")), Integer.parseInt(options.get("window-cap")),
                Integer.parseInt(options.get("window-traffic-delay")),
                baselineJar(options.get("window-baseline-jar"), setups),
                Arrays.stream(options.get("other-minors").split(","))
                .map(String::trim).filter(v -> !v.isEmpty()).toList(), Integer.parseInt(options.get("no-traffic-pairs")),
                oneOf("ours-mode", options.get("ours-mode"), "persistent", "volatile").get(0));
    }

    /** The values of a list option that takes only {@code known} ones, in the order given. */
    private static List<String> oneOf(String option, String csv, String... known) {
        List<String> values = List.of(csv.split(","));
        values.stream().filter(v -> !List.of(known).contains(v)).findFirst().ifPresent(v -> {
            throw new IllegalArgumentException("Unknown --" + option + " value '" + v + "'; known: " + String.join(", ", known));
        });
        return values;
    }

    /**
     * The window's setups: each a known setup, the provider's ones optionally followed by {@code +option=value} pairs
     * that its nodes alone get beside the setup's own (e.g. {@code defaults+hold-readiness=false}), so that two
     * settings of the provider meet in one run.
     */
    private static List<String> windowSetups(String csv) {
        List<String> setups = List.of(csv.split(","));
        oneOf("window-setups", String.join(",", setups.stream().map(Settings::setupBase).toList()), "stock", "defaults",
                "on", "uncapped", "fixed", "off", "idle", "stock-here", "stock-indexed", "baseline");
        setups.stream().filter(s -> !setupOptions(s).isEmpty() && STOCK_SETUPS.contains(setupBase(s))).findFirst()
                .ifPresent(s -> {
                    throw new IllegalArgumentException("--window-setups: '" + s + "' gives provider options to stock "
                            + "Keycloak, which has no provider; only the provider's setups take '+option=value'");
                });
        return setups;
    }

    /**
     * The provider jar of the {@code baseline} setup (another build, e.g. an earlier commit's), which needs it; no jar
     * for a run without that setup.
     */
    private static Optional<Path> baselineJar(String path, List<String> setups) {
        boolean wanted = setups.stream().map(Settings::setupBase).anyMatch("baseline"::equals);
        if (path.isEmpty()) {
            if (wanted) {
                throw new IllegalArgumentException("--window-setups: 'baseline' runs another build of the provider; "
                        + "name its jar with --window-baseline-jar=PATH");
            }
            return Optional.empty();
        }
        Path jar = Path.of(path);
        if (!Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("--window-baseline-jar: no file " + jar.toAbsolutePath());
        }
        if (!wanted) {
            throw new IllegalArgumentException("--window-baseline-jar is for the 'baseline' setup, which --window-setups "
                    + "does not name");
        }
        return Optional.of(jar.toAbsolutePath());
    }

    /** A window setup's name without its {@code +option=value} pairs. */
    static String setupBase(String setup) {
        return setup.split("\\+", 2)[0];
    }

    /** A window setup's own provider options, the {@code +option=value} pairs after its name, in the order given. */
    static Map<String, String> setupOptions(String setup) {
        int plus = setup.indexOf('+');
        return plus < 0 ? Map.of() : optionValues("--window-setups' '+'", setup.substring(plus + 1), "\\+");
    }

    /** {@code option=value} pairs, comma-separated, in the order given. */
    private static Map<String, String> providerOptions(String csv) {
        return optionValues("--provider-options", csv, ",");
    }

    /** {@code option=value} pairs separated by {@code separator} (a regex), in the order given; {@code what} takes them. */
    private static Map<String, String> optionValues(String what, String list, String separator) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String pair : list.split(separator)) {
            if (pair.isBlank()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(what + " takes option=value pairs, e.g. "
                        + "quiet-start-seconds=0; got '" + pair.trim() + "'");
            }
            values.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
        }
        return values;
    }

    private static List<Integer> ints(String csv) {
        return Arrays.stream(csv.split(",")).map(String::trim).map(Integer::parseInt).toList();
    }

    /**
     * The collector {@code --jvm-options} choose instead of Keycloak's G1 (e.g. {@code -XX:+UseParallelGC}), or null.
     * Without G1 a node has no periodic collection when idle, so its live heap is not read.
     */
    String otherCollector() {
        return jvmOptions.stream().filter(o -> o.matches("-XX:\\+Use\\w+GC") && !o.equals("-XX:+UseG1GC")).findFirst()
                .orElse(null);
    }

    boolean runs(String phase) {
        return phases.contains(phase) || phases.contains("loaders") && (phase.equals("ours") || phase.equals("kc24"));
    }
}
