package dev.offlinepreload.schema;

import java.util.List;

import dev.offlinepreload.keycloak.KeycloakMinor;

/**
 * One index of the changelog on OFFLINE_USER_SESSION: its name, the column after the (REALM_ID, OFFLINE_FLAG) prefix,
 * and the id of the changeset that builds it at startup while the table is small.
 */
record OfflineIndex(String name, String column, String changesetId) {

    static final List<OfflineIndex> ALL = List.of(
            new OfflineIndex("OFFPRELOAD_USS_EXPIRY_REFRESH", "LAST_SESSION_REFRESH", "offpreload-1-uss-expiry-refresh"),
            new OfflineIndex("OFFPRELOAD_USS_EXPIRY_CREATED", "CREATED_ON", "offpreload-2-uss-expiry-created"));

    /** The indexes this Keycloak lacks: all of them from 26.5, none on 26.4 (as the changelog's preconditions say). */
    static List<OfflineIndex> forRunningKeycloak() {
        return KeycloakMinor.RUNNING.hasRememberMeColumn() ? ALL : List.of();
    }

    String columns() {
        return "(REALM_ID, OFFLINE_FLAG, " + column + ")";
    }
}
