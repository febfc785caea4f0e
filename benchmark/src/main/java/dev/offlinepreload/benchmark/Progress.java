package dev.offlinepreload.benchmark;

import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/** What the benchmark is doing, on stdout with the time of day, so a long run can be followed. */
final class Progress {

    private Progress() {
    }

    static void say(String format, Object... args) {
        System.out.println("[benchmark " + LocalTime.now().truncatedTo(ChronoUnit.SECONDS) + "] "
                + String.format(Locale.ROOT, format, args));
        System.out.flush();
    }
}
