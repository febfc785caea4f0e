package dev.offlinepreload.schema;

import java.sql.Connection;
import java.sql.SQLException;

import dev.offlinepreload.keycloak.KeycloakMinor;
import liquibase.Liquibase;
import liquibase.changelog.ChangeLogHistoryServiceFactory;
import liquibase.changelog.ChangeSet;
import liquibase.exception.LiquibaseException;
import org.keycloak.connections.jpa.JpaConnectionProviderFactory;
import org.keycloak.connections.jpa.updater.liquibase.LiquibaseJpaUpdaterProvider;
import org.keycloak.connections.jpa.updater.liquibase.conn.KeycloakLiquibase;
import org.keycloak.connections.jpa.updater.liquibase.conn.LiquibaseConnectionProvider;
import org.keycloak.connections.jpa.util.JpaUtils;
import org.keycloak.models.KeycloakSession;
import org.keycloak.models.KeycloakSessionFactory;

/**
 * Records a changeset of this provider's changelog as ran (MARK_RAN: its index is in place, built outside the
 * changelog), in DATABASECHANGELOG_OFFPRELOAD. Liquibase writes the row itself, with the checksum, order and
 * deployment id it would have written, through the Liquibase set-up Keycloak uses for this changelog; so Keycloak's
 * next migration sees the changeset as ran and never tries it again.
 */
final class ChangesetRecorder {

    private final KeycloakSessionFactory factory;
    private final JpaConnectionProviderFactory jpa;

    ChangesetRecorder(KeycloakSessionFactory factory, JpaConnectionProviderFactory jpa) {
        this.factory = factory;
        this.jpa = jpa;
    }

    void markRan(String changesetId) throws LiquibaseException, SQLException {
        // Liquibase keeps its services in process-wide singletons: never beside a Keycloak migration on this node.
        synchronized (LiquibaseJpaUpdaterProvider.class) {
            try (KeycloakSession session = factory.create(); Connection connection = jpa.getConnection()) {
                KeycloakLiquibase liquibase = session.getProvider(LiquibaseConnectionProvider.class).getLiquibaseForCustomUpdate(
                        connection, jpa.getSchema(), IndexChangelogProviderFactory.CHANGELOG,
                        ChangesetRecorder.class.getClassLoader(),
                        JpaUtils.getCustomChangelogTableName(IndexChangelogProviderFactory.PROVIDER_ID));
                try {
                    markRan(liquibase, changesetId);
                } finally {
                    // What Keycloak does after each of its own Liquibase runs (LiquibaseJpaUpdaterProvider).
                    liquibase.resetServices();
                    ChangeLogHistoryServiceFactory.getInstance().register(KeycloakMinor.RUNNING.changeLogHistoryService());
                }
            }
        }
    }

    static void markRan(Liquibase liquibase, String changesetId) throws LiquibaseException {
        ChangeSet changeSet = liquibase.getDatabaseChangeLog().getChangeSets().stream()
                .filter(c -> c.getId().equals(changesetId)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("No changeset " + changesetId + " in " + liquibase.getChangeLogFile()));
        ChangeLogHistoryServiceFactory.getInstance().getChangeLogService(liquibase.getDatabase()).generateDeploymentId();
        liquibase.getDatabase().markChangeSetExecStatus(changeSet, ChangeSet.ExecType.MARK_RAN);
    }
}
