package dev.offlinepreload.testsuite.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.testcontainers.containers.output.OutputFrame;

/**
 * A node's log across all its container incarnations (restarts, kills): written to target/cluster-logs/ as it
 * arrives, so a failed test leaves them behind, and kept in memory for assertions. It also tracks the last
 * cluster view size the node reported.
 */
public final class NodeLog implements Consumer<OutputFrame> {

    /** ISPN000094 (new view) and ISPN000093 (merged view) both carry the member count in parentheses. */
    private static final Pattern VIEW = Pattern.compile("ISPN00009[34]:.*?\\((\\d+)\\)");

    private final Path file;
    private final List<String> lines = new ArrayList<>();
    private int viewSize;
    private Writer writer;

    public NodeLog(Path file) {
        this.file = file;
    }

    @Override
    public synchronized void accept(OutputFrame frame) {
        String text = frame.getUtf8StringWithoutLineEnding();
        if (frame.getType() == OutputFrame.OutputType.END) {
            return;
        }
        lines.add(text);
        Matcher view = VIEW.matcher(text);
        if (view.find()) {
            viewSize = Integer.parseInt(view.group(1));
        }
        write(text);
    }

    /** Called when the node's container is replaced: the new one has not seen any view yet. */
    public synchronized void newIncarnation(String marker) {
        viewSize = 0;
        lines.add("---- " + marker + " ----");
        write("---- " + marker + " ----");
    }

    public synchronized int viewSize() {
        return viewSize;
    }

    public synchronized List<String> lines() {
        return List.copyOf(lines);
    }

    /** Lines of the current container only (since the node's last start). */
    public synchronized List<String> linesSinceStart() {
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (lines.get(i).startsWith("---- ")) {
                return List.copyOf(lines.subList(i + 1, lines.size()));
            }
        }
        return List.copyOf(lines);
    }

    /** The index of the first line that contains {@code text}; fails the test if none does. */
    public static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        throw new AssertionError("no log line contains '" + text + "'");
    }

    /** Seconds from one log line's time stamp to another's. */
    public static double secondsBetween(String from, String to) {
        LocalDateTime start = timeOf(from);
        LocalDateTime end = timeOf(to);
        if (start == null || end == null) {
            throw new IllegalStateException("no time stamp on the log line: " + (start == null ? from : to));
        }
        return Duration.between(start, end).toMillis() / 1000.0;
    }

    /** The time stamp Keycloak's log format puts at the start of a line, or null. */
    public static LocalDateTime timeOf(String line) {
        if (line.length() < 23 || !Character.isDigit(line.charAt(0))) {
            return null;
        }
        try {
            return LocalDateTime.parse(line.substring(0, 23).replace(' ', 'T').replace(',', '.'));
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    public synchronized void close() {
        if (writer != null) {
            try {
                writer.close();
            } catch (IOException ignored) {
                // the log is a diagnostic aid; a close failure must not fail the test
            }
            writer = null;
        }
    }

    private void write(String text) {
        try {
            if (writer == null) {
                Files.createDirectories(file.getParent());
                writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            }
            writer.write(text);
            writer.write('\n');
            writer.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write node log " + file, e);
        }
    }
}
