package dev.offlinepreload.load;

/** Plausibility of a row's timestamps (seconds since the epoch), before anything of it reaches a cache. */
public final class RowCheck {

    /** Clocks of cluster nodes differ a little (a session is created on one, refreshed on another); an hour is not that. */
    static final int MAX_CLOCK_SKEW_SECONDS = 3600;

    private RowCheck() {
    }

    /** @return why the row cannot be loaded, or null if its timestamps make sense */
    public static String timestampProblem(int createdOn, int lastRefresh, int now) {
        if (createdOn <= 0 || lastRefresh <= 0) {
            return "non-positive timestamp (created " + createdOn + ", last refresh " + lastRefresh + ")";
        }
        if (lastRefresh < createdOn - MAX_CLOCK_SKEW_SECONDS) {
            return "last refresh " + lastRefresh + " before creation " + createdOn;
        }
        if (lastRefresh > now + MAX_CLOCK_SKEW_SECONDS || createdOn > now + MAX_CLOCK_SKEW_SECONDS) {
            return "timestamp in the future (created " + createdOn + ", last refresh " + lastRefresh + ", now " + now + ")";
        }
        return null;
    }
}
