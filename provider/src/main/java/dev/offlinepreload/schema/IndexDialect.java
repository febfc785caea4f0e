package dev.offlinepreload.schema;

import java.util.List;
import java.util.Locale;

/**
 * The SQL of an online index build, by database. Where the provider builds the indexes itself (PostgreSQL, MySQL,
 * MariaDB) also the cluster-wide lock that lets one node build: a database lock bound to the building connection,
 * which the database releases when that connection ends, also when the node dies.
 */
enum IndexDialect {

    POSTGRESQL, MYSQL, ORACLE, SQLSERVER, OTHER;

    /** The advisory lock key on PostgreSQL: "offpreld" in ASCII. Advisory locks are per database. */
    static final long POSTGRESQL_LOCK_KEY = 0x6f66667072656c64L;
    /** GET_LOCK names are per server; the database name keeps two clusters on one server apart. */
    private static final String MYSQL_LOCK_NAME = "CONCAT('offpreload-index-', DATABASE())";

    static IndexDialect of(String databaseProduct) {
        String product = databaseProduct == null ? "" : databaseProduct.toLowerCase(Locale.ROOT);
        if (product.contains("postgres")) {
            return POSTGRESQL;
        }
        if (product.contains("mysql") || product.contains("mariadb")) {
            return MYSQL;
        }
        if (product.contains("oracle")) {
            return ORACLE;
        }
        if (product.contains("microsoft")) {
            return SQLSERVER;
        }
        return OTHER;
    }

    /** Whether the provider builds missing indexes itself on this database; elsewhere it logs the SQL. */
    boolean buildsOnline() {
        return this == POSTGRESQL || this == MYSQL;
    }

    /**
     * The statement that builds the index without blocking writes, where the database can (no trailing ';').
     *
     * @param schema Keycloak's schema ({@code db-schema}), or null: named, because a pooled connection has it on its
     *               search path only where Keycloak's Liquibase ran on it
     */
    String create(OfflineIndex index, String schema) {
        String target = index.name() + " ON " + qualified(schema, "OFFLINE_USER_SESSION") + " " + index.columns();
        return switch (this) {
            case POSTGRESQL -> "CREATE INDEX CONCURRENTLY " + target;
            case MYSQL -> "CREATE INDEX " + target + " ALGORITHM=INPLACE LOCK=NONE";
            case ORACLE -> "CREATE INDEX " + target + " ONLINE";
            case SQLSERVER -> "CREATE NONCLUSTERED INDEX " + target + " WITH (ONLINE = ON)";
            case OTHER -> "CREATE INDEX " + target;
        };
    }

    /** PostgreSQL: an interrupted concurrent build leaves an INVALID index behind, which must go before a new build. */
    String dropInvalid(OfflineIndex index, String schema) {
        return "DROP INDEX CONCURRENTLY IF EXISTS " + qualified(schema, index.name());
    }

    /** {@code name} in {@code schema}, or as it is where no schema is configured. */
    static String qualified(String schema, String name) {
        return schema == null || schema.isBlank() ? name : schema + "." + name;
    }

    /** A query answering true/1 when this connection got the lock, false/0 at once when another one holds it. */
    String tryLock() {
        return switch (this) {
            case POSTGRESQL -> "SELECT pg_try_advisory_lock(" + POSTGRESQL_LOCK_KEY + ")";
            case MYSQL -> "SELECT GET_LOCK(" + MYSQL_LOCK_NAME + ", 0)";
            default -> throw new UnsupportedOperationException(name() + " has no online index build");
        };
    }

    String unlock() {
        return switch (this) {
            case POSTGRESQL -> "SELECT pg_advisory_unlock(" + POSTGRESQL_LOCK_KEY + ")";
            case MYSQL -> "SELECT RELEASE_LOCK(" + MYSQL_LOCK_NAME + ")";
            default -> throw new UnsupportedOperationException(name() + " has no online index build");
        };
    }

    /**
     * Session settings of the building connection, each optional (an older server may not know it).
     * PostgreSQL 14+: notice within 5 s that the node is gone and stop the build, instead of finishing it for nobody
     * while holding the lock. MySQL/MariaDB: an online build still needs a short exclusive metadata lock at its start
     * and end; waiting for it queues every other statement on the table, so give up after 10 s rather than stall.
     */
    List<String> buildSessionSettings() {
        return switch (this) {
            case POSTGRESQL -> List.of("SET client_connection_check_interval = 5000");
            case MYSQL -> List.of("SET SESSION lock_wait_timeout = 10");
            default -> List.of();
        };
    }

    /** Undoes {@link #buildSessionSettings()} before the pooled connection goes back to Keycloak. */
    List<String> resetSessionSettings() {
        return switch (this) {
            case POSTGRESQL -> List.of("RESET client_connection_check_interval");
            case MYSQL -> List.of("SET SESSION lock_wait_timeout = DEFAULT");
            default -> List.of();
        };
    }

    /**
     * A query for the build's progress, with the building connection's id as its one parameter, answering one text
     * column; null where the database has none.
     */
    String progressQuery() {
        return this == POSTGRESQL
                ? "SELECT phase || CASE WHEN blocks_total > 0 THEN ', ' || (100 * blocks_done / blocks_total) || '% of blocks'"
                + " ELSE '' END FROM pg_stat_progress_create_index WHERE pid = ?"
                : null;
    }

    /** PostgreSQL: the id of the current connection, for {@link #progressQuery()}. */
    String connectionIdQuery() {
        return "SELECT pg_backend_pid()";
    }
}
