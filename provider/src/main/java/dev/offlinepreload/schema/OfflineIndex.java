package dev.offlinepreload.schema;

import java.util.List;

/**
 * One index of the changelog on OFFLINE_USER_SESSION: its name, the column after the (REALM_ID, OFFLINE_FLAG) prefix,
 * and the id of the changeset that builds it at startup while the table is small.
 */
record OfflineIndex(String name, String column, String changesetId) {

    static final List<OfflineIndex> ALL = List.of(
            new OfflineIndex("OFFPRELOAD_USS_EXPIRY_REFRESH", "LAST_SESSION_REFRESH", "offpreload-1-uss-expiry-refresh"),
            new OfflineIndex("OFFPRELOAD_USS_EXPIRY_CREATED", "CREATED_ON", "offpreload-2-uss-expiry-created"));

    String columns() {
        return "(REALM_ID, OFFLINE_FLAG, " + column + ")";
    }
}
