package dev.offlinepreload.schema;

import org.jboss.logging.Logger;

/**
 * Where the provider does not build the indexes itself: names those the changelog left out because the table was too
 * large to index at startup, with the SQL for a DBA to build them online on this database, as Keycloak does for its
 * own indexes.
 */
final class MissingIndexCheck {

    private static final Logger log = Logger.getLogger(MissingIndexCheck.class);

    /** Matches the changelog's size precondition (Keycloak's default index-creation-threshold). */
    static final int STARTUP_BUILD_LIMIT = 300_000;

    private MissingIndexCheck() {
    }

    /**
     * @param schema Keycloak's schema ({@code db-schema}), or null
     * @param why    why this node does not build them itself
     */
    static void warnAboutMissing(IndexState state, IndexDialect dialect, String schema, String why) {
        state.presence().forEach((index, presence) -> {
            switch (presence) {
                case MISSING -> log.warnf("Index %s is missing: OFFLINE_USER_SESSION held more than %,d rows, so it was "
                                + "not built at startup (the build would block writes to the table), and %s. It speeds up "
                                + "Keycloak's session expiration task. Build it once, online: %s;",
                        index.name(), STARTUP_BUILD_LIMIT, why, dialect.create(index, schema));
                case INVALID -> log.warnf("Index %s is INVALID (an interrupted concurrent build), and %s. Drop it and build "
                                + "it again, online: %s; %s;",
                        index.name(), why, dialect.dropInvalid(index, schema), dialect.create(index, schema));
                case VALID -> {
                }
            }
        });
    }
}
