package dev.offlinepreload.load;

/**
 * Offline sessions in the database that have not expired by their realm's idle timeout, and their client sessions.
 *
 * @param sessions       offline user sessions
 * @param clientSessions offline client sessions of those user sessions
 */
public record SessionCount(long sessions, long clientSessions) {

    /** Client sessions per user session on average (1 when there are none: a session has at least one). */
    public double clientSessionsPerSession() {
        return sessions == 0 ? 1 : Math.max(1, (double) clientSessions / sessions);
    }
}
