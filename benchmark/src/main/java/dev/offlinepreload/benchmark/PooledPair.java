package dev.offlinepreload.benchmark;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPInputStream;

/**
 * Two setups of a stored restart-window cell compared window by window, the way the cell's own pooled tables compare
 * them ({@link PooledComparison}), from its {@code <cell>-samples.csv.gz}: for cells measured before those tables
 * compared with {@code preloading=false}, and to leave restarts out.
 * <pre>
 * ./mvnw -B -q -pl benchmark -am package -DskipTests
 * java -cp benchmark/target/classes dev.offlinepreload.benchmark.PooledPair SAMPLES REFERENCE CANDIDATE [SKIP]
 * </pre>
 * REFERENCE and CANDIDATE are the beginnings of two setups' names (e.g. {@code "with this provider, preloading=false"}
 * and {@code "with this provider, defaults"}), SKIP the repeats to leave out, comma-separated (e.g. {@code 1}).
 */
public final class PooledPair {

    private static final int WINDOW_MILLIS = 10_000;

    private PooledPair() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            System.err.println("usage: PooledPair SAMPLES_CSV_GZ REFERENCE CANDIDATE [SKIP_REPEATS]");
            System.exit(2);
        }
        Set<String> skip = args.length > 3 ? Set.of(args[3].split(",")) : Set.of();
        Map<String, Map<Integer, List<Double>>> runs = read(Path.of(args[0]));
        List<String> reference = chosen(runs, args[1], skip);
        List<String> candidate = chosen(runs, args[2], skip);
        System.out.println("reference: " + String.join(", ", reference) + "\ncandidate: " + String.join(", ", candidate));
        int windows = runs.values().stream().flatMap(r -> r.keySet().stream()).mapToInt(w -> w + 1).max().orElse(0);
        Map<PooledComparison.Verdict, Integer> verdicts = new EnumMap<>(PooledComparison.Verdict.class);
        for (int w = 0; w < windows; w++) {
            PooledComparison.Result r = PooledComparison.compare(window(runs, reference, w), window(runs, candidate, w));
            verdicts.merge(r.verdict(), 1, Integer::sum);
            System.out.printf(Locale.ROOT, "%3d-%-3d s  reference p99 %8.0f ms  candidate %8.0f ms  difference (90%%) "
                    + "%+8.0f to %+8.0f ms  restarts' rank p %.3f  %s%n", w * 10, w * 10 + 10, r.referenceP99(),
                    r.candidateP99(), r.low(), r.high(), r.restartsP(), r.verdict());
        }
        StringBuilder summary = new StringBuilder();
        verdicts.forEach((v, n) -> summary.append(summary.isEmpty() ? "" : ", ").append(n).append(' ').append(v));
        System.out.println(summary);
    }

    /** Per setup (with its repeat number), per window, the latencies (ms) of its successful requests. */
    static Map<String, Map<Integer, List<Double>>> read(Path csvGz) throws IOException {
        Map<String, Map<Integer, List<Double>>> runs = new LinkedHashMap<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(new GZIPInputStream(Files.newInputStream(csvGz)),
                StandardCharsets.UTF_8))) {
            in.readLine(); // setup,due_ms,latency_ms,failed
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                // the setup is quoted (its name has commas) and has no quote inside
                int close = line.lastIndexOf('"');
                String setup = line.substring(1, close);
                String[] fields = line.substring(close + 2).split(",");
                if (!Boolean.parseBoolean(fields[2])) {
                    runs.computeIfAbsent(setup, k -> new LinkedHashMap<>())
                            .computeIfAbsent((int) (Double.parseDouble(fields[0]) / WINDOW_MILLIS), k -> new ArrayList<>())
                            .add(Double.parseDouble(fields[1]));
                }
            }
        }
        return runs;
    }

    private static List<String> chosen(Map<String, Map<Integer, List<Double>>> runs, String prefix, Set<String> skip) {
        List<String> chosen = setups(runs, prefix).stream()
                .filter(name -> !skip.contains(name.substring(name.lastIndexOf('#') + 1))).toList();
        if (chosen.isEmpty()) {
            throw new IllegalArgumentException("no setup begins with \"" + prefix + "\"");
        }
        return chosen;
    }

    /** The setups (with their repeat numbers) whose names begin with {@code prefix}. */
    static List<String> setups(Map<String, Map<Integer, List<Double>>> runs, String prefix) {
        return runs.keySet().stream().filter(name -> name.startsWith(prefix)).toList();
    }

    /** Per setup, the latencies (ms) of window {@code w}'s successful requests. */
    static List<List<Double>> window(Map<String, Map<Integer, List<Double>>> runs, List<String> setups, int w) {
        return setups.stream().map(s -> runs.get(s).getOrDefault(w, List.of())).toList();
    }
}
