package dev.offlinepreload.schema;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MissingIndexCheckTest {

    private static final MissingIndexCheck.Index REFRESH = MissingIndexCheck.INDEXES.get(0);

    @Test
    void givesEachDatabaseItsOnlineBuild() {
        assertThat(MissingIndexCheck.onlineSql("PostgreSQL", REFRESH)).isEqualTo(
                "CREATE INDEX CONCURRENTLY OFFPRELOAD_USS_EXPIRY_REFRESH ON OFFLINE_USER_SESSION (REALM_ID, OFFLINE_FLAG, LAST_SESSION_REFRESH);");
        assertThat(MissingIndexCheck.onlineSql("Oracle", REFRESH)).endsWith(" ONLINE;");
        assertThat(MissingIndexCheck.onlineSql("Microsoft SQL Server", REFRESH)).startsWith("CREATE NONCLUSTERED INDEX")
                .endsWith("WITH (ONLINE = ON);");
        assertThat(MissingIndexCheck.onlineSql("MariaDB", REFRESH)).endsWith("ALGORITHM=INPLACE, LOCK=NONE;");
        assertThat(MissingIndexCheck.onlineSql("MySQL", REFRESH)).endsWith("ALGORITHM=INPLACE, LOCK=NONE;");
        assertThat(MissingIndexCheck.onlineSql("H2", REFRESH)).isEqualTo(
                "CREATE INDEX OFFPRELOAD_USS_EXPIRY_REFRESH ON OFFLINE_USER_SESSION (REALM_ID, OFFLINE_FLAG, LAST_SESSION_REFRESH);");
    }

    @Test
    void theIndexesAreTheChangelogsIndexes() throws Exception {
        String sql = ChangelogSqlTest.updateSql("postgresql");
        for (MissingIndexCheck.Index index : MissingIndexCheck.INDEXES) {
            assertThat(sql).contains("CREATE INDEX " + index.name() + " ON OFFLINE_USER_SESSION(REALM_ID, OFFLINE_FLAG, "
                    + index.column() + ")");
        }
        String changelog;
        try (var in = MissingIndexCheckTest.class.getClassLoader().getResourceAsStream(IndexChangelogProviderFactory.CHANGELOG)) {
            changelog = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        assertThat(changelog).as("the changelog's size precondition").contains("COUNT(*) > " + MissingIndexCheck.STARTUP_BUILD_LIMIT);
    }
}
