package dev.offlinepreload.benchmark;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * What to measure. Defaults are the full run; {@code --quick} is a smoke run of every phase in a few minutes.
 * Arguments: {@code --key=value}, lists comma-separated, e.g. {@code --sizes=250000,1000000 --batches=64,8192}.
 */
record Settings(List<Integer> sizes, List<Integer> batches, List<Integer> workers, List<Integer> kc24Segments,
                int refreshTokens, int refreshSessions, int clusterSessions, String heap, Path out,
                List<String> phases) {

    static Settings parse(String[] args) {
        boolean quick = Arrays.asList(args).contains("--quick");
        int cpus = Runtime.getRuntime().availableProcessors();
        List<Integer> workers = quick ? List.of(cpus) : java.util.stream.IntStream.rangeClosed(1, cpus).boxed().toList();
        Settings s = new Settings(
                quick ? List.of(20_000, 50_000) : List.of(250_000, 1_000_000),
                // 1000, 2000, 4000 rather than 1024...: SQL id lists are cut at 1000, so those are whole queries
                quick ? List.of(64, 1000, 8192) : List.of(64, 128, 256, 512, 1000, 2000, 4000, 8192),
                workers,
                quick ? List.of(64, 2048) : List.of(64, 256, 1024, 2048, 4096),
                quick ? 1_000 : 10_000,
                quick ? 10_000 : 100_000,
                quick ? 50_000 : 1_000_000,
                "4g",
                Path.of("benchmark", "results"),
                List.of("loaders", "refresh"));
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
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases);
                case "batches" -> new Settings(s.sizes, ints(value), s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases);
                case "workers" -> new Settings(s.sizes, s.batches, ints(value), s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases);
                case "kc24-segments" -> new Settings(s.sizes, s.batches, s.workers, ints(value), s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases);
                case "refresh-tokens" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, Integer.parseInt(value),
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, s.phases);
                case "refresh-sessions" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        Integer.parseInt(value), s.clusterSessions, s.heap, s.out, s.phases);
                case "cluster-sessions" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, Integer.parseInt(value), s.heap, s.out, s.phases);
                case "heap" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, value, s.out, s.phases);
                case "out" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, Path.of(value), s.phases);
                case "phases" -> new Settings(s.sizes, s.batches, s.workers, s.kc24Segments, s.refreshTokens,
                        s.refreshSessions, s.clusterSessions, s.heap, s.out, List.of(value.split(",")));
                default -> throw new IllegalArgumentException("Unknown option --" + key);
            };
        }
        return s;
    }

    private static List<Integer> ints(String csv) {
        return Arrays.stream(csv.split(",")).map(String::trim).map(Integer::parseInt).toList();
    }

    boolean runs(String phase) {
        return phases.contains(phase);
    }
}
