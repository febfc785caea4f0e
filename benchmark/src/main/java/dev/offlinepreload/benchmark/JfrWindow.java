package dev.offlinepreload.benchmark;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * What one node's JVM did in a span of wall-clock time, from a recording of {@code --jfr} (one file per node start):
 * CPU samples by thread and by the packages on their stacks (and how many stacks JFR cut at its depth, whose outermost
 * frames are missing), the JVM's share of the machine's CPU, the CPU of this provider's own threads, the monitors
 * threads waited longest on, collector pauses, and the JIT's long compilations. For restart windows: the span from
 * "every node ready" (the progress log's time of day, in this machine's zone) for the window's seconds.
 * <pre>
 * ./mvnw -B -q -pl benchmark -am package -DskipTests
 * java -cp benchmark/target/classes dev.offlinepreload.benchmark.JfrWindow FILE.jfr HH:MM:SS SECONDS
 * </pre>
 */
public final class JfrWindow {

    /** Packages whose share of the samples is counted: a sample counts for each one on its stack. */
    private static final List<String> PACKAGES = List.of("dev.offlinepreload", "org.infinispan.notifications",
            "org.infinispan", "org.jgroups", "org.hibernate", "org.postgresql", "io.vertx");

    /** The name prefix of this provider's threads (coordinator, loaders, progress). */
    private static final String OWN_THREADS = "offline-preload";

    private JfrWindow() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: JfrWindow FILE.jfr HH:MM:SS SECONDS (the progress log's time, this machine's zone)");
            System.exit(2);
        }
        Path file = Path.of(args[0]);
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        Instant first = events.stream().map(RecordedEvent::getStartTime).min(Comparator.naturalOrder()).orElseThrow();
        Instant start = first.atZone(ZoneId.systemDefault()).with(LocalTime.parse(args[1])).toInstant();
        if (start.isBefore(first.minus(Duration.ofHours(1)))) {
            start = start.plus(Duration.ofDays(1)); // the recording began before midnight, the span after it
        }
        Instant end = start.plusSeconds(Long.parseLong(args[2]));
        Map<String, Integer> threads = new HashMap<>();
        Map<String, Integer> packages = new HashMap<>();
        Map<String, Duration> monitors = new HashMap<>();
        Map<String, double[]> ownThreads = new TreeMap<>();
        int samples = 0;
        int truncated = 0;
        int cpuReadings = 0;
        double jvmCpu = 0;
        double machineCpu = 0;
        int collections = 0;
        Duration pauses = Duration.ZERO;
        Duration longest = Duration.ZERO;
        int compilations = 0;
        Duration compiling = Duration.ZERO;
        for (RecordedEvent e : events) {
            if (e.getStartTime().isBefore(start) || !e.getStartTime().isBefore(end)) {
                continue;
            }
            switch (e.getEventType().getName()) {
                case "jdk.ExecutionSample" -> {
                    samples++;
                    String thread = e.getThread("sampledThread").getJavaName();
                    threads.merge(thread == null ? "(native)" : thread.replaceAll("\\d+", "N"), 1, Integer::sum);
                    RecordedStackTrace stack = e.getStackTrace();
                    List<RecordedFrame> frames = stack == null ? List.of() : stack.getFrames();
                    truncated += stack != null && stack.isTruncated() ? 1 : 0;
                    PACKAGES.stream().filter(p -> frames.stream().anyMatch(f -> f.getMethod().getType().getName().startsWith(p)))
                            .forEach(p -> packages.merge(p, 1, Integer::sum));
                }
                case "jdk.CPULoad" -> {
                    cpuReadings++;
                    jvmCpu += e.getFloat("jvmUser") + e.getFloat("jvmSystem");
                    machineCpu += e.getFloat("machineTotal");
                }
                case "jdk.ThreadCPULoad" -> {
                    String thread = e.getThread("eventThread") == null ? null : e.getThread("eventThread").getJavaName();
                    if (thread != null && thread.startsWith(OWN_THREADS)) {
                        double share = e.getFloat("user") + e.getFloat("system");
                        double[] seen = ownThreads.computeIfAbsent(thread, t -> new double[3]);
                        seen[0]++;
                        seen[1] += share;
                        seen[2] = Math.max(seen[2], share);
                    }
                }
                case "jdk.JavaMonitorEnter" -> monitors.merge(e.getClass("monitorClass").getName(), e.getDuration(), Duration::plus);
                case "jdk.Compilation" -> {
                    compilations++;
                    compiling = compiling.plus(e.getDuration());
                }
                case "jdk.GarbageCollection" -> {
                    collections++;
                    pauses = pauses.plus(e.getDuration("sumOfPauses"));
                    longest = longest.compareTo(e.getDuration("longestPause")) < 0 ? e.getDuration("longestPause") : longest;
                }
                default -> {
                }
            }
        }
        System.out.printf(Locale.ROOT, "%s, %s to %s: %d CPU samples, %d of their stacks cut at JFR's depth%n",
                file.getFileName(), start, end, samples, truncated);
        System.out.printf(Locale.ROOT, "  JVM %.1f%% of the machine's CPU, machine %.1f%% busy (%d readings)%n",
                cpuReadings == 0 ? 0 : 100 * jvmCpu / cpuReadings, cpuReadings == 0 ? 0 : 100 * machineCpu / cpuReadings, cpuReadings);
        System.out.printf(Locale.ROOT, "  %d collections, pauses %.2f s, longest %.3f s%n", collections,
                pauses.toNanos() / 1e9, longest.toNanos() / 1e9);
        System.out.printf(Locale.ROOT, "  %d JIT compilations over the recording's threshold (profile: 100 ms), %.1f s in all%n",
                compilations, compiling.toNanos() / 1e9);
        for (String p : PACKAGES) {
            System.out.printf(Locale.ROOT, "  samples with %s on the stack: %d%n", p, packages.getOrDefault(p, 0));
        }
        threads.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(8)
                .forEach(t -> System.out.printf(Locale.ROOT, "  thread %s: %d samples%n", t.getKey(), t.getValue()));
        ownThreads.forEach((thread, seen) -> System.out.printf(Locale.ROOT,
                "  thread %s: %.3f%% of the machine's CPU on average, %.3f%% at most (%d readings)%n",
                thread, 100 * seen[1] / seen[0], 100 * seen[2], (int) seen[0]));
        monitors.entrySet().stream().sorted(Map.Entry.<String, Duration>comparingByValue().reversed()).limit(4)
                .forEach(m -> System.out.printf(Locale.ROOT, "  threads waited %.1f s in all on monitors of %s%n",
                        m.getValue().toNanos() / 1e9, m.getKey()));
    }
}
