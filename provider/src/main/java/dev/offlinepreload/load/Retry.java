package dev.offlinepreload.load;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

/**
 * The one retry-with-backoff of the loader, for planning and for batches: an action that fails is tried again after
 * 0.5 s, 1 s, 2 s, ... (at most 30 s apart) until it succeeds, {@code retryFor} has passed since its first failure,
 * or {@code stop} says so.
 */
public final class Retry {

    private static final Logger log = Logger.getLogger(Retry.class);

    private final Duration retryFor;
    private final Duration firstPause;
    private final Duration maxPause;
    private final BooleanSupplier stop;

    public Retry(Duration retryFor, BooleanSupplier stop) {
        this(retryFor, Duration.ofMillis(500), Duration.ofSeconds(30), stop);
    }

    Retry(Duration retryFor, Duration firstPause, Duration maxPause, BooleanSupplier stop) {
        this.retryFor = retryFor;
        this.firstPause = firstPause;
        this.maxPause = maxPause;
        this.stop = stop;
    }

    /** Thrown when the action still failed when time ran out (or it was stopped); the cause is its last failure. */
    public static final class GaveUp extends Exception {
        private final long firstFailureNanos;
        private final int attempts;

        GaveUp(RuntimeException last, long firstFailureNanos, int attempts) {
            super(rootMessage(last), last);
            this.firstFailureNanos = firstFailureNanos;
            this.attempts = attempts;
        }

        /** {@link System#nanoTime()} of the first failure. */
        public long firstFailureNanos() {
            return firstFailureNanos;
        }

        public int attempts() {
            return attempts;
        }
    }

    /**
     * @param what    what is being tried, for the log ("a batch of 1000 sessions")
     * @param action  the action; a RuntimeException is a failure
     */
    public <T> T call(String what, Supplier<T> action) throws GaveUp, InterruptedException {
        long firstFailure = 0;
        for (int attempt = 1; ; attempt++) {
            try {
                return action.get();
            } catch (RuntimeException e) {
                long now = System.nanoTime();
                firstFailure = attempt == 1 ? now : firstFailure;
                long left = retryFor.toNanos() - (now - firstFailure);
                if (left <= 0 || stop.getAsBoolean()) {
                    log.debugf(e, "Giving up on %s", what);
                    throw new GaveUp(e, firstFailure, attempt);
                }
                long pause = Math.min(pause(attempt).toNanos(), left);
                log.warnf("Offline session preload: %s failed (attempt %d), retrying in %d ms: %s", what, attempt,
                        pause / 1_000_000, rootMessage(e));
                Thread.sleep(Math.max(1, pause / 1_000_000));
            }
        }
    }

    /** The pause after the given failed attempt (1-based): first, 2×first, 4×first, ... up to max. */
    Duration pause(int attempt) {
        long millis = firstPause.toMillis() * (1L << Math.min(attempt - 1, 30));
        return millis >= maxPause.toMillis() || millis < 0 ? maxPause : Duration.ofMillis(millis);
    }

    /** The exception and, where it differs, its root cause: what an operator needs to see of a database failure. */
    public static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == e ? e.toString() : e + " (caused by " + root + ")";
    }
}
