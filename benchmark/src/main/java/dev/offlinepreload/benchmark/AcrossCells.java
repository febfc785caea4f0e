package dev.offlinepreload.benchmark;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Two setups compared over many stored restart-window cells at once. One cell's three restarts a setup decide a window
 * only when every pair of them agrees ({@link PooledComparison}), so a difference of a third or a half, within the 2-4x
 * that one setup's p99 moves from restart to restart, stays "not decided" in every cell; over a dozen cells it shows.
 * Per 10-s window: the ratio of the candidate's median restart p99 to the reference's, per cell, its geometric mean over
 * the cells and in how many the candidate's is the higher. And how often the cells' own verdict calls the candidate
 * worse than the reference and, the other way round, the reference worse than the candidate: where the two do not
 * differ, both counts are what the verdict's own errors come to.
 * <pre>
 * ./mvnw -B -q -pl benchmark -am package -DskipTests
 * java -cp benchmark/target/classes dev.offlinepreload.benchmark.AcrossCells REFERENCE CANDIDATE SAMPLES...
 * </pre>
 * REFERENCE and CANDIDATE are the beginnings of two setups' names, as for {@link PooledPair}; SAMPLES the cells'
 * {@code <cell>-samples.csv.gz}. A cell without both setups is left out.
 */
public final class AcrossCells {

    private AcrossCells() {
    }

    /** One cell: per window, the ratio of the medians of the restarts' p99s (NaN where a side has no request). */
    record Cell(String name, double[] ratios, int candidateWorse, int referenceWorse) {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            System.err.println("usage: AcrossCells REFERENCE CANDIDATE SAMPLES_CSV_GZ...");
            System.exit(2);
        }
        List<Cell> cells = new ArrayList<>();
        for (String file : Arrays.asList(args).subList(2, args.length)) {
            Map<String, Map<Integer, List<Double>>> runs = PooledPair.read(Path.of(file));
            List<String> reference = PooledPair.setups(runs, args[0]);
            List<String> candidate = PooledPair.setups(runs, args[1]);
            if (reference.isEmpty() || candidate.isEmpty()) {
                System.out.println(Path.of(file).getFileName() + ": left out, it lacks one of the setups");
                continue;
            }
            cells.add(cell(Path.of(file).getFileName().toString(), runs, reference, candidate));
        }
        System.out.println("candidate's median restart p99 over the reference's, per 10-s window (" + args[1] + " over "
                + args[0] + "):");
        for (Cell c : cells) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-60s", c.name()));
            Arrays.stream(c.ratios()).forEach(r -> line.append(String.format(Locale.ROOT, " %5.2f", r)));
            System.out.println(line.append(String.format(Locale.ROOT, "   verdicts worse: candidate %d, reference %d",
                    c.candidateWorse(), c.referenceWorse())));
        }
        StringBuilder summary = new StringBuilder(String.format(Locale.ROOT, "%-60s", "geometric mean (cells higher)"));
        for (int w = 0; w < windows(cells); w++) {
            double[] ratios = ratios(cells, w);
            summary.append(String.format(Locale.ROOT, " %.2f (%d/%d)", geometricMean(ratios), higher(ratios), ratios.length));
        }
        System.out.println(summary);
        System.out.printf(Locale.ROOT, "windows decided worse over %d cells: the candidate %d, the reference %d%n", cells.size(),
                cells.stream().mapToInt(Cell::candidateWorse).sum(), cells.stream().mapToInt(Cell::referenceWorse).sum());
    }

    static Cell cell(String name, Map<String, Map<Integer, List<Double>>> runs, List<String> reference, List<String> candidate) {
        int windows = runs.values().stream().flatMap(r -> r.keySet().stream()).mapToInt(w -> w + 1).max().orElse(0);
        double[] ratios = new double[windows];
        int candidateWorse = 0;
        int referenceWorse = 0;
        for (int w = 0; w < windows; w++) {
            List<List<Double>> ref = PooledPair.window(runs, reference, w);
            List<List<Double>> cand = PooledPair.window(runs, candidate, w);
            ratios[w] = medianP99(cand) / medianP99(ref);
            candidateWorse += PooledComparison.compare(ref, cand).verdict() == PooledComparison.Verdict.WORSE ? 1 : 0;
            referenceWorse += PooledComparison.compare(cand, ref).verdict() == PooledComparison.Verdict.WORSE ? 1 : 0;
        }
        return new Cell(name, ratios, candidateWorse, referenceWorse);
    }

    /** The median of the restarts' own p99s of a window; NaN when no restart has a request in it. */
    static double medianP99(List<List<Double>> restarts) {
        double[] p99s = restarts.stream().filter(r -> !r.isEmpty())
                .mapToDouble(r -> new Latencies(r, 0, 0).percentile(99)).sorted().toArray();
        if (p99s.length == 0) {
            return Double.NaN;
        }
        int mid = p99s.length / 2;
        return p99s.length % 2 == 1 ? p99s[mid] : (p99s[mid - 1] + p99s[mid]) / 2;
    }

    static double geometricMean(double[] ratios) {
        return Math.exp(Arrays.stream(ratios).map(Math::log).average().orElse(Double.NaN));
    }

    private static int higher(double[] ratios) {
        return (int) Arrays.stream(ratios).filter(r -> r > 1).count();
    }

    /** The cells' ratios of window {@code w}, where both sides had requests in it. */
    private static double[] ratios(List<Cell> cells, int w) {
        return cells.stream().filter(c -> w < c.ratios().length).mapToDouble(c -> c.ratios()[w])
                .filter(r -> !Double.isNaN(r)).toArray();
    }

    private static int windows(List<Cell> cells) {
        return cells.stream().mapToInt(c -> c.ratios().length).max().orElse(0);
    }
}
