package dev.offlinepreload.benchmark;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * What to measure. Defaults are the full run; {@code --quick} is the iteration run: one size (1M), this provider at
 * its defaults and the raw read only, a few minutes. Arguments: {@code --key=value}, lists comma-separated, e.g.
 * {@code --sizes=250000,1000000 --batches=64,8192}; {@code --jfr=SECONDS} records a JFR profile of the first SECONDS
 * of every node start with this provider into the results folder; {@code --client-sessions=N} (N > 1) adds a load of
 * the largest size with N client sessions per session, by both loaders. Phases: {@code ours}, {@code kc24}, {@code refresh} ({@code loaders} = the first
 * two).
 */
record Settings(List<Integer> sizes, List<Integer> batches, List<Integer> workers, List<Integer> kc24Segments,
                int refreshTokens, int refreshSessions, int clusterSessions, String heap, Path out,
                List<String> phases, int jfrSeconds, int clientSessions) {

    static Settings parse(String[] args) {
        boolean quick = Arrays.asList(args).contains("--quick");
        int cpus = Runtime.getRuntime().availableProcessors();
        List<Integer> workers = quick ? List.of(cpus) : java.util.stream.IntStream.rangeClosed(1, cpus).boxed().toList();
        Settings s = new Settings(
                quick ? List.of(1_000_000) : List.of(250_000, 1_000_000),
                quick ? List.of(Report.DEFAULT_BATCH) : List.of(1000, 4000, 8192),
                workers,
                List.of(64, 1024, 2048),
                10_000,
                100_000,
                1_000_000,
                "4g",
                Path.of("benchmark", "results"),
                quick ? List.of("ours") : List.of("ours", "kc24", "refresh"),
                0,
                quick ? 1 : 3);
        for (String arg : args) {
            if (arg.equals("--quick") || arg.isBlank()) {
                continue;
            }
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("Unknown argument '" + arg + "'; expected --key=value or --quick");
            }
            String key = arg.substring(2, eq);
            String value = arg.substring(eq + 1);
            s = switch (key) {
                case "sizes" -> new Settings(ints(value), s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases, s.jfrSeconds, s.clientSessions);
                case "batches" -> new Settings(s.sizes, ints(value), s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases, s.jfrSeconds, s.clientSessions);
                case "workers" -> new Settings(s.sizes, s.batches, ints(value), s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases, s.jfrSeconds, s.clientSessions);
                case "kc24-segments" -> new Settings(s.sizes, s.batches, s.workers, ints(value), s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases, s.jfrSeconds, s.clientSessions);
                case "refresh-tokens" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, Integer.parseInt(value),
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases, s.jfrSeconds, s.clientSessions);
                case "refresh-sessions" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        Integer.parseInt(value), s.clusterSessions, s.heap, s.out, s.phases, s.jfrSeconds, s.clientSessions);
                case "cluster-sessions" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, Integer.parseInt(value), s.heap, s.out, s.phases, s.jfrSeconds, s.clientSessions);
                case "heap" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, value, s.out, s.phases, s.jfrSeconds, s.clientSessions);
                case "out" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, Path.of(value), s.phases, s.jfrSeconds, s.clientSessions);
                case "client-sessions" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases, s.jfrSeconds, Integer.parseInt(value));
                case "jfr" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases, Integer.parseInt(value), s.clientSessions);
                case "phases" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, List.of(value.split(",")), s.jfrSeconds, s.clientSessions);
                default -> throw new IllegalArgumentException("Unknown option --" + key);
            };
        }
        return s;
    }

    private static List<Integer> ints(String csv) {
        return Arrays.stream(csv.split(",")).map(String::trim).map(Integer::parseInt).toList();
    }

    boolean runs(String phase) {
        return phases.contains(phase) || phases.contains("loaders") && (phase.equals("ours") || phase.equals("kc24"));
    }
}
