package dev.offlinepreload.benchmark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;

/**
 * CPU time a container has used since it started, in seconds: all its processes, user and system time, from its
 * control group (cgroup v2's {@code cpu.stat}, or v1's {@code cpuacct.usage}), read inside the container so that no
 * host path is involved. The difference over a load is that container's work for it, with no waiting in it.
 */
final class ContainerCpu {

    private static final Pattern USAGE_USEC = Pattern.compile("(?m)^usage_usec (\\d+)$");

    private ContainerCpu() {
    }

    static double seconds(GenericContainer<?> container) {
        String out;
        try {
            ExecResult read = container.execInContainer("sh", "-c",
                    "cat /sys/fs/cgroup/cpu.stat 2>/dev/null || cat /sys/fs/cgroup/cpuacct/cpuacct.usage");
            out = read.getStdout();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read the CPU time of container " + container.getContainerName(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return parse(out);
    }

    /** Seconds from cgroup v2's {@code cpu.stat} ({@code usage_usec}) or v1's {@code cpuacct.usage} (nanoseconds). */
    static double parse(String out) {
        Matcher v2 = USAGE_USEC.matcher(out);
        if (v2.find()) {
            return Long.parseLong(v2.group(1)) / 1e6;
        }
        if (out.strip().matches("\\d+")) {
            return Long.parseLong(out.strip()) / 1e9;
        }
        throw new IllegalStateException("No CPU time in the container's cgroup: '" + out.strip() + "'");
    }
}
