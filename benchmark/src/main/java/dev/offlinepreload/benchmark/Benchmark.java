package dev.offlinepreload.benchmark;

import java.util.List;

/**
 * The benchmark: loads the same seeded offline sessions with this provider, with Keycloak 24.0.5's built-in
 * preloader and with a raw JDBC read, then measures refresh latency after full restarts of a 3-node cluster, and
 * writes results.md, runs.csv and PNG charts to the results folder. Phase {@code planning} ({@link PlanningScale}), only
 * when asked for, prints its figures to the progress log. Run it with {@code bash benchmark/run.sh}
 * (see the README's Performance section); it is never part of the CI tests.
 */
public final class Benchmark {

    private Benchmark() {
    }

    public static void main(String[] args) {
        Settings settings = Settings.parse(args);
        String command = "bash benchmark/run.sh" + (args.length == 0 ? "" : " " + String.join(" ", args)).stripTrailing();
        Progress.say("settings: %s", settings);
        long start = System.nanoTime();

        LoaderComparison loaders = new LoaderComparison(settings);
        if (settings.runs("ours")) {
            loaders.runOurs();
            settings.otherMinors().forEach(loaders::runOursOn);
        }
        if (settings.runs("kc24")) {
            loaders.runKeycloak24();
        }
        RefreshLatency refresh = new RefreshLatency(settings);
        if (settings.runs("refresh")) {
            refresh.run();
        }
        if (settings.runs("planning")) {
            new PlanningScale(settings).run(); // its figures go to the progress log only
        }
        if (settings.runs("window")) {
            new RestartWindow(settings).run(); // restart-window.md in the results folder
        }
        if (settings.runs("ours") || settings.runs("kc24") || settings.runs("refresh")) {
            new Report(settings, command, List.copyOf(loaders.results()), loaders.ourBaselineMiB(), refresh.passes(),
                    refresh.formations()).write();
            Progress.say("done in %.1f min; results in %s", (System.nanoTime() - start) / 60e9,
                    settings.out().toAbsolutePath().resolve("results.md"));
        } else {
            // a planning- or window-only run leaves results.md and runs.csv of the last full run alone
            Progress.say("done in %.1f min (%s)", (System.nanoTime() - start) / 60e9, command);
        }
        System.exit(0); // Testcontainers' and the HTTP client's threads would otherwise keep the JVM alive
    }
}
