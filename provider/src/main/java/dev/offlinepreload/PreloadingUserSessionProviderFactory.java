package dev.offlinepreload;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.offlinepreload.config.InvalidOptionException;
import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.config.PreloadOption;
import org.jboss.logging.Logger;
import org.keycloak.Config;
import org.keycloak.infinispan.util.InfinispanUtils;
import org.keycloak.models.KeycloakSessionFactory;
import org.keycloak.models.UserSessionProvider;
import org.keycloak.models.UserSessionSpi;
import org.keycloak.models.sessions.infinispan.InfinispanUserSessionProviderFactory;
import org.keycloak.provider.ProviderConfigProperty;
import org.keycloak.provider.ProviderConfigurationBuilder;
import org.keycloak.provider.ProviderFactory;

/**
 * Keycloak's own user-session provider, plus offline-session preloading.
 *
 * <p>It extends the built-in factory so that sessions are served exactly as stock Keycloak serves them, and code
 * that checks {@code instanceof InfinispanUserSessionProviderFactory} keeps working. Its {@link #order()} is above
 * the built-in one, so installing the jar makes it the default provider; the built-in stays selectable with
 * {@code spi-user-sessions--provider=infinispan}.
 */
public class PreloadingUserSessionProviderFactory extends InfinispanUserSessionProviderFactory {

    public static final String PROVIDER_ID = "offline-preload";

    /** Keycloak picks the enabled factory with the highest order as the default; the built-in has 1. */
    static final int ORDER = InfinispanUtils.PROVIDER_ORDER + 10;

    private static final Logger log = Logger.getLogger(PreloadingUserSessionProviderFactory.class);

    private PreloadConfig config = PreloadConfig.DISABLED;
    private KeycloakSessionFactory sessionFactory;

    @Override
    public void init(Config.Scope scope) {
        // The built-in options (session-expiration-period, use-caches, ...) keep being read where operators already
        // set them: spi-user-sessions--infinispan--*.
        super.init(Config.scope(UserSessionSpi.NAME, InfinispanUtils.EMBEDDED_PROVIDER_ID));
        try {
            config = PreloadConfig.parse(scope::get);
        } catch (InvalidOptionException e) {
            // A bad value must not take the node down: it serves sessions lazily, as stock Keycloak does.
            log.errorf("%s. Offline session preloading is disabled on this node until the option is fixed.", e.getMessage());
            config = PreloadConfig.DISABLED;
        }
    }

    @Override
    public void postInit(KeycloakSessionFactory factory) {
        super.postInit(factory);
        this.sessionFactory = factory;
        log.infof("Offline session preloader active as user-sessions provider '%s', configuration %s",
                PROVIDER_ID, config.describe());
        if (factory.getProviderFactory(UserSessionProvider.class, InfinispanUtils.EMBEDDED_PROVIDER_ID) != null) {
            // Keycloak initialises every enabled factory of an SPI, so the idle built-in one still runs its own
            // expiration task beside ours.
            log.debugf("The built-in user-sessions provider '%s' is initialised too; build with "
                    + "--spi-user-sessions--infinispan--enabled=false to skip it", InfinispanUtils.EMBEDDED_PROVIDER_ID);
        }
    }

    @Override
    public String getId() {
        return PROVIDER_ID;
    }

    @Override
    public int order() {
        return ORDER;
    }

    public PreloadConfig preloadConfig() {
        return config;
    }

    @Override
    public Map<String, String> getOperationalInfo() {
        Map<String, String> info = new HashMap<>(super.getOperationalInfo());
        config.describe().forEach((key, value) -> info.put(key, value));
        info.put("active-provider", activeProviderId());
        return info;
    }

    /** The user-sessions provider Keycloak really hands out, as resolved by Keycloak itself. */
    private String activeProviderId() {
        if (sessionFactory == null) {
            return "unknown";
        }
        ProviderFactory<UserSessionProvider> active = sessionFactory.getProviderFactory(UserSessionProvider.class);
        return active == null ? "none" : active.getId();
    }

    @Override
    public List<ProviderConfigProperty> getConfigMetadata() {
        ProviderConfigurationBuilder builder = ProviderConfigurationBuilder.create();
        for (PreloadOption option : PreloadOption.values()) {
            builder.property()
                    .name(option.key())
                    .type(option.type())
                    .defaultValue(option.defaultValue())
                    .helpText(option.helpText())
                    .add();
        }
        return builder.build();
    }
}
