package dev.offlinepreload.schema;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.jboss.logging.Logger;

/**
 * After Keycloak's migration: names the indexes the changelog left out because the table was too large to index at
 * startup, with the SQL for a DBA to build them online on this database, as Keycloak does for its own indexes.
 */
final class MissingIndexCheck {

    private static final Logger log = Logger.getLogger(MissingIndexCheck.class);

    /** Matches the changelog's size precondition (Keycloak's default index-creation-threshold). */
    static final int STARTUP_BUILD_LIMIT = 300_000;

    record Index(String name, String column) {
    }

    static final List<Index> INDEXES = List.of(
            new Index("OFFPRELOAD_USS_EXPIRY_REFRESH", "LAST_SESSION_REFRESH"),
            new Index("OFFPRELOAD_USS_EXPIRY_CREATED", "CREATED_ON"));

    private MissingIndexCheck() {
    }

    static void warnAboutMissing(Connection connection, String schema) throws SQLException {
        DatabaseMetaData metaData = connection.getMetaData();
        String table = metaData.storesLowerCaseIdentifiers() ? "offline_user_session" : "OFFLINE_USER_SESSION";
        Set<String> present = new HashSet<>();
        try (ResultSet indexes = metaData.getIndexInfo(null, schema, table, false, true)) {
            while (indexes.next()) {
                String name = indexes.getString("INDEX_NAME");
                if (name != null) {
                    present.add(name.toUpperCase(Locale.ROOT));
                }
            }
        }
        for (Index index : INDEXES) {
            if (!present.contains(index.name())) {
                log.warnf("Index %s is missing: OFFLINE_USER_SESSION holds more than %,d rows, so it was not built at "
                                + "startup (the build would block writes to the table). It speeds up Keycloak's "
                                + "session expiration task. Build it once, online: %s",
                        index.name(), STARTUP_BUILD_LIMIT, onlineSql(metaData.getDatabaseProductName(), index));
            }
        }
    }

    /** The statement that builds the index without blocking writes, where the database can. */
    static String onlineSql(String databaseProduct, Index index) {
        String columns = "(REALM_ID, OFFLINE_FLAG, " + index.column() + ")";
        String product = databaseProduct == null ? "" : databaseProduct.toLowerCase(Locale.ROOT);
        if (product.contains("postgres")) {
            return "CREATE INDEX CONCURRENTLY " + index.name() + " ON OFFLINE_USER_SESSION " + columns + ";";
        }
        if (product.contains("oracle")) {
            return "CREATE INDEX " + index.name() + " ON OFFLINE_USER_SESSION " + columns + " ONLINE;";
        }
        if (product.contains("microsoft")) {
            return "CREATE NONCLUSTERED INDEX " + index.name() + " ON OFFLINE_USER_SESSION " + columns + " WITH (ONLINE = ON);";
        }
        if (product.contains("mysql") || product.contains("mariadb")) {
            return "CREATE INDEX " + index.name() + " ON OFFLINE_USER_SESSION " + columns + " ALGORITHM=INPLACE, LOCK=NONE;";
        }
        return "CREATE INDEX " + index.name() + " ON OFFLINE_USER_SESSION " + columns + ";";
    }
}
