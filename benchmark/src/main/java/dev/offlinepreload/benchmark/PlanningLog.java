package dev.offlinepreload.benchmark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.offlinepreload.testsuite.cluster.NodeLog;

/**
 * What a node's log says about one planning: the provider's DEBUG line when planning starts and its start line of the
 * load ("loading N sessions (...)"), which ends it; the full collections and class histograms a SIGQUIT asks for
 * ({@code -XX:+PrintClassHistogram}: a full collection, then the live objects by class).
 */
final class PlanningLog {

    static final Pattern STARTED = Pattern.compile("Offline session preload on \\S+: planning for cluster topology");
    /** The start line; the hot tier's count, since hot-window-seconds, is optional so that older logs still read. */
    static final Pattern PLANNED = Pattern.compile("Offline session preload on \\S+: loading (\\d+) sessions \\("
            + "(?:\\d+ recently refreshed first; )?(\\d+) in the database, (\\d+) owned by this node, (\\d+) already cached, "
            + "(\\d+) over this node's limit of (\\d+)\\)");
    private static final Pattern HISTOGRAM_ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");
    private static final Pattern HISTOGRAM_TOTAL = Pattern.compile("^Total\\s+(\\d+)\\s+(\\d+)\\s*$");
    private static final String HEAP_INSPECTION = "Heap Inspection Initiated GC";

    /** The plan as the start line of the load gives it. */
    record Plan(long toLoad, long seen, long owned, long alreadyCached, long overCapacity, long limit) {
        /** The sessions the planner kept: owned ones within the node's limit (loaded or already cached). */
        long kept() {
            return owned - overCapacity;
        }
    }

    /** Live objects of one class in a histogram. */
    record Row(long instances, long bytes) {
    }

    /** One class histogram: rows by class name, and the total. */
    record Histogram(Map<String, Row> rows, long instances, long bytes) {
        Row row(String className) {
            return rows.getOrDefault(className, new Row(0, 0));
        }
    }

    /** Where planning starts and ends in a node's log (line indexes), and what it planned. */
    record Window(int from, int to, double seconds, Plan plan) {
    }

    private PlanningLog() {
    }

    static Optional<Plan> plan(String line) {
        Matcher m = PLANNED.matcher(line);
        if (!m.find()) {
            return Optional.empty();
        }
        return Optional.of(new Plan(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                Long.parseLong(m.group(4)), Long.parseLong(m.group(5)), Long.parseLong(m.group(6))));
    }

    /**
     * The first planning of the log: from the DEBUG line that starts it to the start line of the load, and the time
     * between their time stamps (milliseconds in Keycloak's log format). Empty while the planning has not ended.
     */
    static Optional<Window> window(List<String> lines) {
        int from = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (from < 0 && STARTED.matcher(lines.get(i)).find()) {
                from = i;
            } else if (from >= 0) {
                Optional<Plan> plan = plan(lines.get(i));
                if (plan.isPresent()) {
                    return Optional.of(new Window(from, i, NodeLog.secondsBetween(lines.get(from), lines.get(i)), plan.get()));
                }
            }
        }
        return Optional.empty();
    }

    /** The live heap of the last periodic full collection before line {@code index}, or -1. */
    static long lastPeriodicLiveBefore(List<String> lines, int index) {
        long live = -1;
        for (String line : lines.subList(0, index)) {
            Optional<GcLog.Pause> pause = GcLog.parse(line);
            if (pause.isPresent() && pause.get().periodicFull()) {
                live = pause.get().afterBytes();
            }
        }
        return live;
    }

    /** The heap after each full collection that a heap inspection (SIGQUIT with PrintClassHistogram) made, in order. */
    static List<Long> inspectionLiveBytes(List<String> lines) {
        List<Long> live = new ArrayList<>();
        for (String line : lines) {
            if (line.contains(HEAP_INSPECTION)) {
                GcLog.parse(line).filter(p -> p.kind().startsWith("Pause Full")).ifPresent(p -> live.add(p.afterBytes()));
            }
        }
        return live;
    }

    /** The class histograms in the lines, in order (each ends with its "Total" line). */
    static List<Histogram> histograms(List<String> lines) {
        List<Histogram> histograms = new ArrayList<>();
        Map<String, Row> rows = new LinkedHashMap<>();
        for (String line : lines) {
            Matcher total = HISTOGRAM_TOTAL.matcher(line);
            if (total.find()) {
                histograms.add(new Histogram(Map.copyOf(rows), Long.parseLong(total.group(1)), Long.parseLong(total.group(2))));
                rows.clear();
                continue;
            }
            Matcher row = HISTOGRAM_ROW.matcher(line);
            if (row.find()) {
                rows.merge(row.group(3), new Row(Long.parseLong(row.group(1)), Long.parseLong(row.group(2))),
                        (a, b) -> new Row(a.instances() + b.instances(), a.bytes() + b.bytes()));
            }
        }
        return histograms;
    }

    /** Number of complete class histograms in the lines (to wait for one before asking for the next). */
    static int histogramCount(List<String> lines) {
        return (int) lines.stream().filter(l -> HISTOGRAM_TOTAL.matcher(l).find()).count();
    }
}
