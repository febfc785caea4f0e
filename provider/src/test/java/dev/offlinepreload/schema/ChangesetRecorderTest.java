package dev.offlinepreload.schema;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

import dev.offlinepreload.schema.IndexState.Presence;
import liquibase.Contexts;
import liquibase.LabelExpression;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import org.junit.jupiter.api.Test;

/** The changelog run for real on H2, with an index built outside it, then recorded through Liquibase. */
class ChangesetRecorderTest {

    private static Liquibase liquibase(Connection connection) throws Exception {
        Database database = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(connection));
        database.setDatabaseChangeLogTableName("DATABASECHANGELOG_OFFPRELOAD");
        return new Liquibase(IndexChangelogProviderFactory.CHANGELOG, new ClassLoaderResourceAccessor(), database);
    }

    @Test
    void anIndexBuiltOutsideTheChangelogIsRecordedSoThatTheChangelogNeverTriesItAgain() throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:h2:mem:recorder;DB_CLOSE_DELAY=-1")) {
            try (Statement s = connection.createStatement()) {
                s.execute("CREATE TABLE OFFLINE_USER_SESSION (USER_SESSION_ID VARCHAR(36), REALM_ID VARCHAR(36),"
                        + " OFFLINE_FLAG VARCHAR(4), LAST_SESSION_REFRESH INT, CREATED_ON INT, REMEMBER_ME BOOLEAN)");
                // built online by the provider (or by a DBA): the changeset skips itself and is not recorded
                s.execute(IndexDialect.OTHER.create(OfflineIndex.ALL.get(0), null));
            }
            liquibase(connection).update(new Contexts(), new LabelExpression());
            IndexState before = IndexState.read(connection, null, IndexDialect.OTHER);
            assertThat(before.presence()).containsValues(Presence.VALID, Presence.VALID);
            assertThat(before.recordedChangesets()).containsExactly(OfflineIndex.ALL.get(1).changesetId());

            ChangesetRecorder.markRan(liquibase(connection), OfflineIndex.ALL.get(0).changesetId());

            assertThat(IndexState.read(connection, null, IndexDialect.OTHER).work()).isEmpty();
            assertThat(liquibase(connection).listUnrunChangeSets(new Contexts(), new LabelExpression()))
                    .as("Keycloak's next migration: nothing to run, the checksums match").isEmpty();
            try (Statement s = connection.createStatement();
                 var rs = s.executeQuery("SELECT EXECTYPE FROM DATABASECHANGELOG_OFFPRELOAD WHERE ID = '"
                         + OfflineIndex.ALL.get(0).changesetId() + "'")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("MARK_RAN");
            }
        }
    }
}
