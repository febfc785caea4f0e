package dev.offlinepreload.schema;

import java.util.List;

import java.sql.Connection;
import java.sql.SQLException;

import org.jboss.logging.Logger;
import org.keycloak.Config;
import org.keycloak.connections.jpa.JpaConnectionProvider;
import org.keycloak.connections.jpa.JpaConnectionProviderFactory;
import org.keycloak.connections.jpa.entityprovider.JpaEntityProvider;
import org.keycloak.connections.jpa.entityprovider.JpaEntityProviderFactory;
import org.keycloak.models.KeycloakSession;
import org.keycloak.models.KeycloakSessionFactory;
import org.keycloak.models.utils.PostMigrationEvent;

/**
 * Ships this project's Liquibase changelog (folder liquibase-changelogs/) through Keycloak's own migration run:
 * it executes after Keycloak's changelog, under Keycloak's database lock, at every start.
 *
 * <p>After the migration it warns about indexes left out because the table was too large to index at startup.
 *
 * <p>Keycloak names the changelog table after the first 10 letters of this id, so the id starts with a word no
 * other provider is likely to share: the table is {@code DATABASECHANGELOG_OFFPRELOAD}.
 */
public class IndexChangelogProviderFactory implements JpaEntityProviderFactory, JpaEntityProvider {

    public static final String PROVIDER_ID = "offpreload-indexes";
    private static final Logger log = Logger.getLogger(IndexChangelogProviderFactory.class);
    public static final String CHANGELOG = "META-INF/offline-preload/offline-preload-changelog.xml";

    @Override
    public JpaEntityProvider create(KeycloakSession session) {
        return this;
    }

    @Override
    public List<Class<?>> getEntities() {
        return List.of(); // indexes only, no entities of our own
    }

    @Override
    public String getChangelogLocation() {
        return CHANGELOG;
    }

    @Override
    public String getFactoryId() {
        return PROVIDER_ID;
    }

    @Override
    public String getId() {
        return PROVIDER_ID;
    }

    @Override
    public void init(Config.Scope config) {
    }

    @Override
    public void postInit(KeycloakSessionFactory factory) {
        factory.register(event -> {
            if (event instanceof PostMigrationEvent) {
                checkIndexes(factory);
            }
        });
    }

    private static void checkIndexes(KeycloakSessionFactory factory) {
        if (!(factory.getProviderFactory(JpaConnectionProvider.class) instanceof JpaConnectionProviderFactory jpa)) {
            return;
        }
        try (Connection connection = jpa.getConnection()) {
            MissingIndexCheck.warnAboutMissing(connection, jpa.getSchema());
        } catch (SQLException | RuntimeException e) {
            log.debugf(e, "Could not check the offline-session indexes");
        }
    }

    @Override
    public void close() {
    }
}
