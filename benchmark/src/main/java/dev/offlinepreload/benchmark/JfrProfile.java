package dev.offlinepreload.benchmark;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import dev.offlinepreload.testsuite.cluster.KeycloakNode;

/**
 * With {@code --jfr=SECONDS}, every start of a node records a JFR profile of its first SECONDS, which the benchmark
 * copies into the results folder's jfr/, one file per node start (read a window of it with {@link JfrWindow}, or
 * JDK Mission Control).
 */
final class JfrProfile {

    private static final String FILE = "/tmp/preload.jfr";

    private JfrProfile() {
    }

    /** The JVM flag that records the first {@code seconds} of a node's start. */
    static String flag(int seconds) {
        return "-XX:StartFlightRecording=settings=profile,duration=" + seconds + "s,filename=" + FILE;
    }

    /** Waits until the node has written the recording of its first {@code seconds}, then copies it to {@code target}. */
    static void copy(KeycloakNode node, int seconds, Path target) {
        try {
            Files.createDirectories(target.getParent());
            await("JFR recording written").atMost(Duration.ofSeconds(seconds + 30L))
                    .pollInterval(Duration.ofSeconds(1))
                    .until(() -> node.execInContainer("test", "-s", FILE).getExitCode() == 0);
            Thread.sleep(2000); // the JVM writes the file in one go, but give it time to finish
            node.copyFileFromContainer(FILE, target.toString());
            Progress.say("profile in %s", target);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
