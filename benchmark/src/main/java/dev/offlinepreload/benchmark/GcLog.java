package dev.offlinepreload.benchmark;

import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the JVM's own GC log ({@code -Xlog:gc}) out of a node's output. The heap occupancy right after a collection
 * is what a loader really keeps alive at that moment (the cached data plus its batches in flight), independent of how
 * large the JVM lets its young generation grow; a periodic full collection once the node is idle gives the live
 * heap after loading.
 */
final class GcLog {

    /** Flags for a measured node: GC lines on stdout, and a full GC once the node has been idle for 3 s. */
    static final String JVM_FLAGS = "-Xlog:gc:stdout -XX:G1PeriodicGCInterval=3000 -XX:-G1PeriodicGCInvokesConcurrent";

    private static final Pattern PAUSE = Pattern.compile(
            "GC\\(\\d+\\) (Pause [^()]*?)(?: \\(([^)]*)\\))*? (\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\) ([0-9.]+)ms");

    record Pause(String kind, String line, long beforeBytes, long afterBytes, double millis) {
        boolean periodicFull() {
            return kind.startsWith("Pause Full") && line.contains("G1 Periodic Collection");
        }
    }

    /** What the log says about one load window. */
    record Window(long peakAfterGcBytes, int pauses, double pauseMillis, Long liveAfterBytes) {
    }

    private GcLog() {
    }

    static Optional<Pause> parse(String line) {
        Matcher m = PAUSE.matcher(line);
        if (!m.find()) {
            return Optional.empty();
        }
        return Optional.of(new Pause(m.group(1).trim(), line, bytes(m.group(3), m.group(4)), bytes(m.group(5), m.group(6)),
                Double.parseDouble(m.group(9))));
    }

    /**
     * GC activity between the first line matching {@code start} and the next matching {@code end}, and the live heap
     * of the first periodic full collection after the end (null if there was none yet).
     */
    static Window window(List<String> lines, Predicate<String> start, Predicate<String> end) {
        int from = indexOf(lines, start, 0);
        int to = from < 0 ? -1 : indexOf(lines, end, from + 1);
        if (from < 0 || to < 0) {
            throw new IllegalStateException("load window not found in the node's log");
        }
        long peak = 0;
        int pauses = 0;
        double millis = 0;
        for (String line : lines.subList(from, to + 1)) {
            Optional<Pause> pause = parse(line);
            if (pause.isPresent()) {
                peak = Math.max(peak, pause.get().afterBytes());
                pauses++;
                millis += pause.get().millis();
            }
        }
        Long live = null;
        for (String line : lines.subList(to + 1, lines.size())) {
            Optional<Pause> pause = parse(line);
            if (pause.isPresent() && pause.get().periodicFull()) {
                live = pause.get().afterBytes();
                break;
            }
        }
        return new Window(peak, pauses, millis, live);
    }

    /** The live heap of the first periodic full collection in {@code lines}, or null. */
    static Long firstPeriodicLive(List<String> lines) {
        return lines.stream().map(GcLog::parse).flatMap(Optional::stream).filter(Pause::periodicFull)
                .map(Pause::afterBytes).findFirst().orElse(null);
    }

    private static int indexOf(List<String> lines, Predicate<String> match, int from) {
        for (int i = from; i < lines.size(); i++) {
            if (match.test(lines.get(i))) {
                return i;
            }
        }
        return -1;
    }

    private static long bytes(String value, String unit) {
        long n = Long.parseLong(value);
        return switch (unit) {
            case "K" -> n << 10;
            case "M" -> n << 20;
            default -> n << 30;
        };
    }
}
