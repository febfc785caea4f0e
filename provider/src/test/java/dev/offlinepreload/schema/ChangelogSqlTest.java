package dev.offlinepreload.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import liquibase.ChecksumVersion;
import liquibase.Contexts;
import liquibase.LabelExpression;
import liquibase.Liquibase;
import liquibase.changelog.ChangeSet;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.OfflineConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The changelog's SQL as Liquibase generates it offline for every database Keycloak supports; PostgreSQL, MariaDB and
 * H2 also run it for real in the cluster tests.
 */
class ChangelogSqlTest {

    private static final Pattern CREATE_INDEX = Pattern.compile(
            "CREATE (?:NONCLUSTERED )?INDEX (CONCURRENTLY )?(?:\\w+\\.)?(\\w+) ON (?:\\w+\\.)?(\\w+)\\s*\\(([^)]*)\\)");

    static String updateSql(String database) throws Exception {
        StringWriter sql = new StringWriter();
        try (Liquibase liquibase = offline(database)) {
            liquibase.update(new Contexts(), new LabelExpression(), sql);
        }
        return sql.toString();
    }

    private static Liquibase offline(String database) throws Exception {
        ClassLoaderResourceAccessor resources = new ClassLoaderResourceAccessor();
        // Offline mode keeps its own change history in a CSV file: a fresh one per run, so no earlier run counts.
        Path history = Files.createTempFile("offline-changelog-" + database, ".csv");
        Files.delete(history);
        OfflineConnection connection = new OfflineConnection("offline:" + database + "?outputLiquibaseSql=none&changeLogFile="
                + history.toAbsolutePath(), resources);
        Database db = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(connection);
        db.setDatabaseChangeLogTableName("DATABASECHANGELOG_OFFPRELOAD");
        return new Liquibase(IndexChangelogProviderFactory.CHANGELOG, resources, db);
    }

    @Test
    void theChangesetsKeepTheChecksumsThatInstallationsRecorded() throws Exception {
        // Keycloak validates every recorded changeset's checksum at each start, so a changed <createIndex> would stop
        // every node of an installation that ran it; preconditions are not part of the checksum. The values are
        // those Liquibase 4.33 (Keycloak 26.7) records for these changesets.
        try (Liquibase liquibase = offline("postgresql")) {
            assertThat(liquibase.getDatabaseChangeLog().getChangeSets()).extracting(ChangeSet::getId,
                            c -> c.generateCheckSum(ChecksumVersion.latest()).toString())
                    .containsExactly(tuple("offpreload-1-uss-expiry-refresh", "9:72d0de37d30e1eccf5798bcaff2cf037"),
                            tuple("offpreload-2-uss-expiry-created", "9:9907eabaee9b2f101bacf4136a5f48f0"));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "oracle", "mssql", "mysql", "mariadb", "h2"})
    void createsEveryIndexWithIdentifiersOracleAccepts(String database) throws Exception {
        String sql = updateSql(database);
        Matcher m = CREATE_INDEX.matcher(sql);
        int indexes = 0;
        while (m.find()) {
            indexes++;
            assertThat(m.group(2)).as("index name on %s", database).startsWith("OFFPRELOAD_").hasSizeLessThanOrEqualTo(30);
            assertThat(m.group(3)).isEqualTo("OFFLINE_USER_SESSION");
        }
        assertThat(indexes).as("CREATE INDEX statements for %s:%n%s", database, sql).isEqualTo(2);
        assertThat("DATABASECHANGELOG_OFFPRELOAD").hasSizeLessThanOrEqualTo(30);
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "oracle", "mssql", "mysql", "mariadb", "h2"})
    void neverBuildsConcurrentlyInsideKeycloaksMigration(String database) throws Exception {
        // A concurrent build waits for the transaction holding Keycloak's database lock: it would never finish.
        assertThat(updateSql(database)).doesNotContain("CONCURRENTLY");
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mysql"})
    void dropsNothing(String database) throws Exception {
        // An INVALID leftover is the online build's to drop (DROP INDEX CONCURRENTLY): a plain DROP INDEX in here
        // would wait for a build running on another node and queue every write to the table behind it.
        assertThat(updateSql(database)).doesNotContainIgnoringCase("DROP INDEX");
    }
}
