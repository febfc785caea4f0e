package dev.offlinepreload.schema;

import java.util.List;

import org.keycloak.Config;
import org.keycloak.connections.jpa.entityprovider.JpaEntityProvider;
import org.keycloak.connections.jpa.entityprovider.JpaEntityProviderFactory;
import org.keycloak.models.KeycloakSession;
import org.keycloak.models.KeycloakSessionFactory;

/**
 * Ships this project's Liquibase changelog (folder liquibase-changelogs/) through Keycloak's own migration run:
 * it executes after Keycloak's changelog, under Keycloak's database lock, at every start.
 *
 * <p>Keycloak names the changelog table after the first 10 letters of this id, so the id starts with a word no
 * other provider is likely to share: the table is {@code DATABASECHANGELOG_OFFPRELOAD}.
 */
public class IndexChangelogProviderFactory implements JpaEntityProviderFactory, JpaEntityProvider {

    public static final String PROVIDER_ID = "offpreload-indexes";
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
    }

    @Override
    public void close() {
    }
}
