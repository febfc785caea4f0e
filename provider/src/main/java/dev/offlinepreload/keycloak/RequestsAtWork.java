package dev.offlinepreload.keycloak;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the requests at work on this node, from their arrival to their response ({@link RequestArrivals}): token
 * refreshes, logins, logouts, introspection, userinfo, the admin console. Those are the work a load competes with.
 * The counts are the JVM's (one Keycloak node per JVM); the filter that feeds them is created by Keycloak's HTTP layer,
 * not by this provider's factory.
 */
public final class RequestsAtWork {

    private static final AtomicInteger IN_FLIGHT = new AtomicInteger();
    private static final AtomicLong BEGUN = new AtomicLong();

    /**
     * {@link #BEGUN} at the previous {@link #busy()}; read and written by one thread at a time: the coordinator's during
     * the quiet start, then the governor's, which that thread starts (the revocation check has a count of its own).
     */
    private long seen = BEGUN.get();

    static void arrived() {
        IN_FLIGHT.incrementAndGet();
        BEGUN.incrementAndGet();
    }

    static void finished() {
        IN_FLIGHT.decrementAndGet();
    }

    /**
     * Requests at work now, and at least 1 if one arrived since the previous call, however short it was: a sample every
     * 25 ms (or every second, in the quiet start) sees every request. Called from one thread at a time.
     */
    int busy() {
        long now = BEGUN.get();
        boolean began = now != seen;
        seen = now;
        return Math.max(IN_FLIGHT.get(), began ? 1 : 0);
    }
}
