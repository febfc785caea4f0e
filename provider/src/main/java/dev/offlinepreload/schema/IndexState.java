package dev.offlinepreload.schema;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.keycloak.connections.jpa.util.JpaUtils;

/**
 * What the database holds of the changelog's indexes: each one missing, INVALID (PostgreSQL, after an interrupted
 * concurrent build) or valid; and which of their changesets are recorded as ran. Only Keycloak's schema counts:
 * another schema of the same database may hold a Keycloak of its own.
 */
record IndexState(Map<OfflineIndex, Presence> presence, Set<String> recordedChangesets) {

    enum Presence { MISSING, INVALID, VALID }

    static IndexState read(Connection connection, String schema, IndexDialect dialect) throws SQLException {
        DatabaseMetaData metaData = connection.getMetaData();
        String table = metaData.storesLowerCaseIdentifiers() ? "offline_user_session" : "OFFLINE_USER_SESSION";
        // Keycloak's schema: the configured one, else the connection's (null where the database has catalogs instead)
        String keycloakSchema = schema != null ? schema : connection.getSchema();
        Set<String> present = new HashSet<>();
        try (ResultSet indexes = metaData.getIndexInfo(null, keycloakSchema, table, false, true)) {
            while (indexes.next()) {
                String name = indexes.getString("INDEX_NAME");
                if (name != null) {
                    present.add(name.toUpperCase(Locale.ROOT));
                }
            }
        }
        Set<String> invalid = new HashSet<>();
        if (dialect == IndexDialect.POSTGRESQL) {
            try (PreparedStatement s = OnlineIndexBuild.bounded(connection.prepareStatement("SELECT upper(c.relname) FROM pg_index i"
                    + " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                    + " WHERE NOT i.indisvalid AND c.relname LIKE 'offpreload%' AND n.nspname = ?"))) {
                s.setString(1, keycloakSchema);
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        invalid.add(rs.getString(1));
                    }
                }
            }
        }
        Set<String> recorded = new HashSet<>();
        String changelogTable = JpaUtils.getCustomChangelogTableName(IndexChangelogProviderFactory.PROVIDER_ID);
        try (Statement s = OnlineIndexBuild.bounded(connection.createStatement());
             ResultSet rs = s.executeQuery("SELECT ID FROM " + IndexDialect.qualified(schema, changelogTable))) {
            while (rs.next()) {
                recorded.add(rs.getString(1));
            }
        }
        Map<OfflineIndex, Presence> presence = new LinkedHashMap<>();
        for (OfflineIndex index : OfflineIndex.forRunningKeycloak()) {
            presence.put(index, invalid.contains(index.name()) ? Presence.INVALID
                    : present.contains(index.name()) ? Presence.VALID : Presence.MISSING);
        }
        return new IndexState(presence, recorded);
    }

    /** What the background build has to do, in changelog order; empty when every index is valid and recorded. */
    List<IndexWork> work() {
        List<IndexWork> work = new ArrayList<>();
        presence.forEach((index, p) -> {
            boolean record = !recordedChangesets.contains(index.changesetId());
            if (p != Presence.VALID || record) {
                work.add(new IndexWork(index, p == Presence.INVALID, p != Presence.VALID, record));
            }
        });
        return work;
    }

    /**
     * One index's part of the build.
     *
     * @param dropInvalid drop the INVALID leftover of an interrupted concurrent build first
     * @param build       build the index
     * @param record      then record its changeset as ran, so that the changelog never tries it again
     */
    record IndexWork(OfflineIndex index, boolean dropInvalid, boolean build, boolean record) {
    }
}
