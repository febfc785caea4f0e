package dev.offlinepreload.load;

import java.util.List;

/**
 * A session this loader put into the caches: kept until its second revocation check.
 *
 * @param id        the user session id
 * @param clientIds the client ids of the client sessions imported with it
 */
public record ImportedSession(String id, List<String> clientIds) {
}
