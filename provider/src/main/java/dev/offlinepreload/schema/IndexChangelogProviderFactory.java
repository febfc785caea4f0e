package dev.offlinepreload.schema;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

import dev.offlinepreload.PreloadingUserSessionProviderFactory;
import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.config.PreloadOption;
import dev.offlinepreload.keycloak.Compatibility;
import dev.offlinepreload.keycloak.KeycloakMinor;
import org.jboss.logging.Logger;
import org.keycloak.Config;
import org.keycloak.connections.infinispan.InfinispanConnectionProvider;
import org.keycloak.connections.jpa.JpaConnectionProvider;
import org.keycloak.connections.jpa.JpaConnectionProviderFactory;
import org.keycloak.connections.jpa.entityprovider.JpaEntityProvider;
import org.keycloak.connections.jpa.entityprovider.JpaEntityProviderFactory;
import org.keycloak.models.KeycloakSession;
import org.keycloak.models.KeycloakSessionFactory;
import org.keycloak.models.UserSessionProvider;
import org.keycloak.models.utils.PostMigrationEvent;
import org.keycloak.provider.EnvironmentDependentProviderFactory;

/**
 * Ships this project's Liquibase changelog (folder liquibase-changelogs/) through Keycloak's own migration run:
 * it executes after Keycloak's changelog, under Keycloak's database lock, at every start.
 *
 * <p>After the migration it takes care of the indexes the changelog left out because the table was too large to
 * index at startup: it starts their online build ({@link OnlineIndexBuild}), or, where it does not build them, logs
 * the SQL for a DBA ({@link MissingIndexCheck}).
 *
 * <p>Keycloak names the changelog table after the first 10 letters of this id, so the id starts with a word no
 * other provider is likely to share: the table is {@code DATABASECHANGELOG_OFFPRELOAD}.
 */
public class IndexChangelogProviderFactory implements JpaEntityProviderFactory, JpaEntityProvider,
        EnvironmentDependentProviderFactory {

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

    /**
     * Build time: on a Keycloak this jar does not support, the changelog stays out too (its indexes are chosen per
     * Keycloak version). The user-sessions factory logs why, once.
     */
    @Override
    public boolean isSupported(Config.Scope config) {
        return Compatibility.whyNotSupported(true) == null;
    }

    @Override
    public void init(Config.Scope config) {
    }

    @Override
    public void postInit(KeycloakSessionFactory factory) {
        factory.register(event -> {
            if (event instanceof PostMigrationEvent) {
                afterMigration(factory);
            }
        });
    }

    /**
     * Runs inside Keycloak's startup (the post-migration event is published from its startup observer): nothing may
     * escape, not even a LinkageError where Keycloak's internals differ from those this jar was built against (on
     * 26.4, {@code getNodeInfo()} does not exist), or the node would not start.
     */
    static void afterMigration(KeycloakSessionFactory factory) {
        try {
            if (!(factory.getProviderFactory(JpaConnectionProvider.class) instanceof JpaConnectionProviderFactory jpa)) {
                return;
            }
            try (Connection connection = jpa.getConnection()) {
                IndexDialect dialect = IndexDialect.of(connection.getMetaData().getDatabaseProductName());
                String whyNot = whyNotBuiltOnline(factory, dialect);
                if (whyNot == null) {
                    OnlineIndexBuild build = new OnlineIndexBuild(jpa, dialect, nodeName(factory), new ChangesetRecorder(factory, jpa));
                    if (dialect == IndexDialect.MYSQL) {
                        // An online build needs the table's metadata lock for a moment at its start and end, and
                        // waits for every open transaction on the table to end, while new statements queue behind
                        // it: the loader's key stream and batches would make it time out, and stall behind it.
                        log.debugf("Offline-session indexes: the online build waits for this node's first load pass");
                        preloader(factory).firstPassOver().thenRun(build::start);
                    } else {
                        build.start(); // PostgreSQL's CREATE INDEX CONCURRENTLY waits for transactions, blocks none
                    }
                } else {
                    MissingIndexCheck.warnAboutMissing(IndexState.read(connection, jpa.getSchema(), dialect), dialect,
                            jpa.getSchema(), whyNot);
                }
            }
        } catch (SQLException | RuntimeException e) {
            log.debugf(e, "Could not check the offline-session indexes");
        } catch (LinkageError e) {
            log.errorf("Offline-session indexes: not checked or built on this node: this provider does not match this "
                    + "Keycloak version's internals (%s). Keycloak works without them.", e);
        }
    }

    /** Null when this node builds missing indexes itself; otherwise why not, for the log line with the SQL. */
    private static String whyNotBuiltOnline(KeycloakSessionFactory factory, IndexDialect dialect) {
        if (!dialect.buildsOnline()) {
            return "this provider builds indexes online only on PostgreSQL, MySQL and MariaDB";
        }
        // The option is one of the user-sessions provider's: read and validated there, once.
        PreloadingUserSessionProviderFactory preloader = preloader(factory);
        if (preloader == null) {
            return "the user-sessions provider '" + PreloadingUserSessionProviderFactory.PROVIDER_ID + "' is disabled";
        }
        if (preloader.config() == PreloadConfig.DISABLED) {
            return "an option of this provider is invalid (see the ERROR at startup)";
        }
        if (!preloader.config().buildIndexesOnline()) {
            return PreloadOption.BUILD_INDEXES_ONLINE.confName() + "=false";
        }
        return null;
    }

    /** This jar's user-sessions provider, or null where it is disabled. */
    private static PreloadingUserSessionProviderFactory preloader(KeycloakSessionFactory factory) {
        return factory.getProviderFactory(UserSessionProvider.class, PreloadingUserSessionProviderFactory.PROVIDER_ID)
                instanceof PreloadingUserSessionProviderFactory preloader ? preloader : null;
    }

    private static String nodeName(KeycloakSessionFactory factory) {
        try (KeycloakSession session = factory.create()) {
            return KeycloakMinor.RUNNING.nodeName(session.getProvider(InfinispanConnectionProvider.class));
        }
    }

    @Override
    public void close() {
    }
}
