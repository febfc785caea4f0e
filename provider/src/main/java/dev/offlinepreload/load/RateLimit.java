package dev.offlinepreload.load;

import java.util.function.LongSupplier;

/**
 * Caps how many sessions per second a node loads (the {@code max-sessions-per-second} option), for operators who want
 * request latency untouched while a node loads. Workers ask before each batch and wait until the batch fits under the
 * cap; 0 means no cap. Shared by the node's workers.
 */
public final class RateLimit {

    private final long perSecond;
    private final LongSupplier nanoTime;
    private long nextFreeNanos;

    public RateLimit(long perSecond, LongSupplier nanoTime) {
        this.perSecond = perSecond;
        this.nanoTime = nanoTime;
        this.nextFreeNanos = nanoTime.getAsLong();
    }

    /** @return how long the caller must wait (ns) before it may load {@code sessions} more; 0 = go now */
    public synchronized long reserve(int sessions) {
        if (perSecond <= 0) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        long start = Math.max(now, nextFreeNanos);
        nextFreeNanos = start + sessions * 1_000_000_000L / perSecond;
        return start - now;
    }

    /** Waits until {@code sessions} more fit under the cap. */
    public void acquire(int sessions) throws InterruptedException {
        long wait = reserve(sessions);
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
    }
}
