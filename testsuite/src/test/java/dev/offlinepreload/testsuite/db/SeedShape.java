package dev.offlinepreload.testsuite.db;

/**
 * What {@link OfflineSessionSeeder} writes for one realm.
 *
 * @param sessions                  offline user sessions to create
 * @param clientSessionsPerSession  offline client sessions per user session, each for a different client (at most
 *                                  as many as the realm has template clients)
 * @param sessionsPerUser           consecutive sessions that belong to the same user (a user with a phone and a tablet
 *                                  has 2); users are reused round-robin when there are more sessions than users
 * @param expiredShare              share (0..1) last refreshed beyond the offline idle timeout: in the table, but
 *                                  no longer valid
 * @param corruptShare              share (0..1) whose user session DATA is not valid JSON
 * @param spreadSeconds             the valid sessions' last refresh is spread over this many seconds before now
 */
public record SeedShape(int sessions, int clientSessionsPerSession, int sessionsPerUser, double expiredShare,
                        double corruptShare, int spreadSeconds) {

    /** Keycloak's default offline session idle timeout (30 days). */
    public static final int OFFLINE_IDLE_TIMEOUT_SECONDS = 30 * 24 * 3600;

    public SeedShape {
        if (sessions < 0 || clientSessionsPerSession < 1 || sessionsPerUser < 1 || spreadSeconds < 1) {
            throw new IllegalArgumentException("sessions >= 0, clientSessionsPerSession/sessionsPerUser/spreadSeconds >= 1");
        }
        if (expiredShare < 0 || corruptShare < 0 || expiredShare + corruptShare > 1) {
            throw new IllegalArgumentException("expiredShare and corruptShare must be shares between 0 and 1");
        }
    }

    /** Valid sessions, one client session each, refreshed within the last week, one session per user. */
    public static SeedShape simple(int sessions) {
        return new SeedShape(sessions, 1, 1, 0, 0, 7 * 24 * 3600);
    }

    public SeedShape withSessions(int count) {
        return new SeedShape(count, clientSessionsPerSession, sessionsPerUser, expiredShare, corruptShare, spreadSeconds);
    }
}
