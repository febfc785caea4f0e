package dev.offlinepreload.load;

import java.util.List;

/**
 * A session this loader put into the caches, or whose missing client sessions it added: kept until its delayed
 * revocation check. Evicting it removes the user session entry and these client sessions.
 *
 * @param id        the user session id
 * @param clientIds the client ids of the client sessions this loader put
 */
public record ImportedSession(String id, List<String> clientIds) {
}
