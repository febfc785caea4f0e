package dev.offlinepreload.load;

import java.time.Duration;

/** Exponential backoff between attempts of a failed batch. */
public class Backoff {

    private final Duration base;
    private final Duration max;

    public Backoff(Duration base, Duration max) {
        this.base = base;
        this.max = max;
    }

    /** The pause after the given failed attempt (1-based): base, 2×base, 4×base, ... up to max. */
    public Duration after(int attempt) {
        long factor = 1L << Math.min(attempt - 1, 30);
        long millis = base.toMillis() * factor;
        return millis >= max.toMillis() || millis < 0 ? max : Duration.ofMillis(millis);
    }
}
