package dev.offlinepreload.load;

import java.util.List;

/**
 * A session this loader put into the caches, or whose missing client sessions it added: kept until its delayed
 * revocation check. Evicting it removes the user session entry and these client sessions.
 *
 * @param id        the user session id
 * @param clientIds the client ids of the client sessions this loader put
 * @param entryHere whether the user session's own entry is this node's: always where a client session lives with its
 *                  session; on Keycloak 26.4 a node may put only client sessions of a session whose entry another node
 *                  owns
 */
public record ImportedSession(String id, List<String> clientIds, boolean entryHere) {

    /** A session whose entry is this node's. */
    public ImportedSession(String id, List<String> clientIds) {
        this(id, clientIds, true);
    }
}
