package dev.offlinepreload.keycloak;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.offlinepreload.load.RequestWatch;

/**
 * Counts the requests at work on this node, from their arrival to their response ({@link RequestArrivals}): token
 * refreshes, logins, logouts, introspection, userinfo, the admin console. Those are the work a load competes with.
 * The counts are the JVM's (one Keycloak node per JVM); the filter that feeds them is created by Keycloak's HTTP layer,
 * not by this provider's factory.
 */
public final class RequestsAtWork implements RequestWatch {

    private static final AtomicInteger IN_FLIGHT = new AtomicInteger();
    private static final AtomicLong BEGUN = new AtomicLong();
    private static final AtomicLong SLOW = new AtomicLong();
    private static final AtomicLong FINISHED = new AtomicLong();
    private static final AtomicLong FINISHED_NANOS = new AtomicLong();
    private static final long SLOW_NANOS = TimeUnit.MILLISECONDS.toNanos(SLOW_MILLIS);

    /*
     * BEGUN, SLOW and FINISHED at the previous look; each instance is read by one thread (the quiet start's, the
     * governor's, the revocation check's: SessionStore.newRequestWatch()).
     */
    private long seenBegun = BEGUN.get();
    private long seenSlow = SLOW.get();
    private long seenFinished = FINISHED.get();
    private long seenFinishedNanos = FINISHED_NANOS.get();

    static void arrived() {
        IN_FLIGHT.incrementAndGet();
        BEGUN.incrementAndGet();
    }

    /** @param arrivedNanos {@link System#nanoTime()} at the request's arrival */
    static void finished(long arrivedNanos) {
        IN_FLIGHT.decrementAndGet();
        long took = System.nanoTime() - arrivedNanos;
        if (took > SLOW_NANOS) {
            SLOW.incrementAndGet();
        }
        FINISHED_NANOS.addAndGet(took);
        FINISHED.incrementAndGet();
    }

    /**
     * Requests at work now, and at least 1 if one arrived since the previous call, however short it was: a sample every
     * 25 ms (or every second, in the quiet start) sees every request.
     */
    @Override
    public int busy() {
        long now = BEGUN.get();
        boolean began = now != seenBegun;
        seenBegun = now;
        return Math.max(IN_FLIGHT.get(), began ? 1 : 0);
    }

    @Override
    public int slow() {
        long now = SLOW.get();
        long since = now - seenSlow;
        seenSlow = now;
        return (int) Math.min(Integer.MAX_VALUE, since);
    }

    @Override
    public Finished finished() {
        long count = FINISHED.get();
        long nanos = FINISHED_NANOS.get();
        Finished since = new Finished((int) Math.min(Integer.MAX_VALUE, count - seenFinished),
                (nanos - seenFinishedNanos) / 1e6);
        seenFinished = count;
        seenFinishedNanos = nanos;
        return since;
    }
}
