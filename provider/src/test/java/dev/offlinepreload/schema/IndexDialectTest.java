package dev.offlinepreload.schema;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class IndexDialectTest {

    private static final OfflineIndex REFRESH = OfflineIndex.ALL.get(0);

    @Test
    void givesEachDatabaseItsOnlineBuild() {
        assertThat(IndexDialect.of("PostgreSQL").create(REFRESH, null)).isEqualTo(
                "CREATE INDEX CONCURRENTLY OFFPRELOAD_USS_EXPIRY_REFRESH ON OFFLINE_USER_SESSION (REALM_ID, OFFLINE_FLAG, LAST_SESSION_REFRESH)");
        assertThat(IndexDialect.of("PostgreSQL").dropInvalid(REFRESH, null)).isEqualTo(
                "DROP INDEX CONCURRENTLY IF EXISTS OFFPRELOAD_USS_EXPIRY_REFRESH");
        assertThat(IndexDialect.of("Oracle").create(REFRESH, null)).endsWith(" ONLINE");
        assertThat(IndexDialect.of("Microsoft SQL Server").create(REFRESH, null)).startsWith("CREATE NONCLUSTERED INDEX")
                .endsWith("WITH (ONLINE = ON)");
        assertThat(IndexDialect.of("MariaDB").create(REFRESH, null)).endsWith(" ALGORITHM=INPLACE LOCK=NONE");
        assertThat(IndexDialect.of("MySQL")).isEqualTo(IndexDialect.MYSQL);
        assertThat(IndexDialect.of("H2").create(REFRESH, null)).isEqualTo(
                "CREATE INDEX OFFPRELOAD_USS_EXPIRY_REFRESH ON OFFLINE_USER_SESSION (REALM_ID, OFFLINE_FLAG, LAST_SESSION_REFRESH)");
    }

    @Test
    void namesKeycloaksSchemaWhereOneIsConfigured() {
        // db-schema: a pooled connection has the schema on its search path only where Keycloak's Liquibase ran on it
        assertThat(IndexDialect.POSTGRESQL.create(REFRESH, "idp")).isEqualTo(
                "CREATE INDEX CONCURRENTLY OFFPRELOAD_USS_EXPIRY_REFRESH ON idp.OFFLINE_USER_SESSION (REALM_ID, OFFLINE_FLAG, LAST_SESSION_REFRESH)");
        assertThat(IndexDialect.POSTGRESQL.dropInvalid(REFRESH, "idp")).isEqualTo(
                "DROP INDEX CONCURRENTLY IF EXISTS idp.OFFPRELOAD_USS_EXPIRY_REFRESH");
        assertThat(IndexDialect.MYSQL.create(REFRESH, "")).contains(" ON OFFLINE_USER_SESSION ");
    }

    @Test
    void buildsOnlyWhereTheDatabaseHasANamedLockAndAnOnlineBuild() {
        assertThat(IndexDialect.values()).filteredOn(IndexDialect::buildsOnline)
                .containsExactly(IndexDialect.POSTGRESQL, IndexDialect.MYSQL);
        assertThat(IndexDialect.POSTGRESQL.tryLock()).isEqualTo("SELECT pg_try_advisory_lock(" + IndexDialect.POSTGRESQL_LOCK_KEY + ")");
        assertThat(IndexDialect.POSTGRESQL.unlock()).isEqualTo("SELECT pg_advisory_unlock(" + IndexDialect.POSTGRESQL_LOCK_KEY + ")");
        assertThat(IndexDialect.MYSQL.tryLock()).startsWith("SELECT GET_LOCK(").endsWith(", 0)");
        assertThat(IndexDialect.MYSQL.unlock()).startsWith("SELECT RELEASE_LOCK(");
    }

    @Test
    void theIndexesAreTheChangelogsIndexes() throws Exception {
        String sql = ChangelogSqlTest.updateSql("postgresql");
        for (OfflineIndex index : OfflineIndex.ALL) {
            assertThat(sql).contains("CREATE INDEX " + index.name() + " ON OFFLINE_USER_SESSION(REALM_ID, OFFLINE_FLAG, "
                    + index.column() + ")");
        }
        String changelog;
        try (var in = IndexDialectTest.class.getClassLoader().getResourceAsStream(IndexChangelogProviderFactory.CHANGELOG)) {
            changelog = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        for (OfflineIndex index : OfflineIndex.ALL) {
            assertThat(changelog).contains("<changeSet id=\"" + index.changesetId() + "\"")
                    .contains("indexName=\"" + index.name() + "\"");
        }
        assertThat(changelog).as("the changelog's size precondition").contains("COUNT(*) > " + MissingIndexCheck.STARTUP_BUILD_LIMIT);
    }
}
