package dev.offlinepreload;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.offlinepreload.config.InvalidOptionException;
import dev.offlinepreload.keycloak.Compatibility;
import dev.offlinepreload.keycloak.KeycloakSessionStore;
import dev.offlinepreload.report.PreloadMetrics;
import dev.offlinepreload.report.PreloadState;
import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.config.PreloadOption;
import dev.offlinepreload.config.Preloading;
import dev.offlinepreload.config.ReadinessHold;
import org.jboss.logging.Logger;
import org.keycloak.Config;
import org.keycloak.models.KeycloakSession;
import org.keycloak.models.KeycloakSessionFactory;
import org.keycloak.models.UserSessionProvider;
import org.keycloak.models.UserSessionProviderFactory;
import org.keycloak.models.UserSessionSpi;
import org.keycloak.models.utils.PostMigrationEvent;
import org.keycloak.provider.ProviderConfigProperty;
import org.keycloak.provider.EnvironmentDependentProviderFactory;
import org.keycloak.provider.ProviderConfigurationBuilder;
import org.keycloak.provider.ProviderFactory;
import org.keycloak.provider.ServerInfoAwareProviderFactory;

/**
 * The user-sessions provider Keycloak hands out, plus offline-session preloading.
 *
 * <p>It serves every session through Keycloak's own built-in factory ({@code infinispan}), which Keycloak initialises
 * and closes itself: {@link #create} forwards to it, so sessions are served exactly as stock Keycloak serves them. It
 * does not extend that factory: this class links only Keycloak's public SPI interfaces, which are the same in every
 * 26.x, so that a Keycloak whose internals differ (another minor, a patched stream) cannot fail to load it. Where
 * this jar does not support the Keycloak it runs on, {@link #isSupported} says so at build time and Keycloak leaves
 * the factory out: the built image is stock Keycloak. Its {@link #order()} is above the built-in one, so installing
 * the jar makes it the default provider; the built-in stays selectable with {@code spi-user-sessions--provider=infinispan}.
 */
public class PreloadingUserSessionProviderFactory implements UserSessionProviderFactory<UserSessionProvider>,
        EnvironmentDependentProviderFactory, ServerInfoAwareProviderFactory {

    public static final String PROVIDER_ID = "offline-preload";
    /** Keycloak's built-in user-sessions provider, which serves every session. */
    static final String BUILT_IN_ID = "infinispan";

    /** Keycloak picks the enabled factory with the highest order as the default; the built-in has 1. */
    static final int ORDER = 11;

    private static final Logger log = Logger.getLogger(PreloadingUserSessionProviderFactory.class);
    /**
     * With hold-readiness=true, how long startup waits for the first load itself, beyond join-timeout-seconds for the
     * nodes: a hung database must not keep a node from ever becoming ready.
     */
    static final Duration READINESS_HOLD_FOR_LOAD = Duration.ofMinutes(10);
    /**
     * With hold-readiness=auto, how long startup waits at most for the hot tier: a few thousand sessions a node load
     * in about 2 s; a hot tier that takes longer loads on after the node is ready, as the rest does.
     */
    static final Duration READINESS_HOLD_FOR_HOT_TIER = Duration.ofSeconds(60);

    private PreloadConfig config = PreloadConfig.DISABLED;
    private KeycloakSessionFactory sessionFactory;
    /** Keycloak's own factory, initialised and closed by Keycloak: every session comes from it. */
    private volatile UserSessionProviderFactory<?> builtIn;
    private PreloadMetrics metrics;
    private PreloadCoordinator coordinator;
    private KeycloakSessionStore store;
    private Thread shutdownHook;
    /** Completes once this node's first pass is over, or at once where this node does not preload. */
    private final CompletableFuture<Void> firstPassOver = new CompletableFuture<>();

    /**
     * Build time ({@code kc.sh build}): false leaves this factory out of the built server, which is then stock Keycloak.
     * Nothing may escape: Keycloak does not catch what a factory throws here, and the build would fail.
     */
    @Override
    public boolean isSupported(Config.Scope scope) {
        String why = Compatibility.whyNotSupported(
                Config.scope(UserSessionSpi.NAME, BUILT_IN_ID).getBoolean("enabled", true));
        if (why != null) {
            log.warnf("Offline session preloader left out of this build: %s. The server serves sessions as stock "
                    + "Keycloak does.", why);
            return false;
        }
        return true;
    }

    @Override
    public void init(Config.Scope scope) {
        try {
            config = PreloadConfig.parse(scope::get, Runtime.getRuntime().availableProcessors());
        } catch (InvalidOptionException e) {
            // A bad value must not take the node down: it serves sessions lazily, as stock Keycloak does.
            log.errorf("%s. Offline session preloading and the online index build are off on this node until the option "
                    + "is fixed.", e.getMessage());
            config = PreloadConfig.DISABLED;
        }
    }

    /** Keycloak's own provider. */
    @Override
    public UserSessionProvider create(KeycloakSession session) {
        UserSessionProviderFactory<?> factory = builtIn;
        if (factory == null) {
            // Asked before this factory's postInit (other factories' postInit open sessions, e.g. with volatile
            // sessions): the built-in is initialised by then, as it is when stock Keycloak hands it out that early.
            factory = builtIn = builtIn(session.getKeycloakSessionFactory());
        }
        return (UserSessionProvider) factory.create(session);
    }

    @Override
    public void postInit(KeycloakSessionFactory factory) {
        this.sessionFactory = factory;
        this.builtIn = builtIn(factory);
        this.metrics = new PreloadMetrics();
        log.infof("Offline session preloader active as user-sessions provider '%s', configuration %s",
                PROVIDER_ID, config.describe());
        // Loading starts once Keycloak has started: the cluster is joined and the schema migrated by then.
        factory.register(event -> {
            if (event instanceof PostMigrationEvent) {
                startPreloading();
            }
        });
    }

    private static UserSessionProviderFactory<?> builtIn(KeycloakSessionFactory factory) {
        return (UserSessionProviderFactory<?>) factory.getProviderFactory(UserSessionProvider.class, BUILT_IN_ID);
    }

    /** The validated options; the index build reads its switch here too, so all options are read one way. */
    public PreloadConfig config() {
        return config;
    }

    private void startPreloading() {
        try {
            if (!preloads()) {
                return;
            }
            String reason = Compatibility.whyNotApplicable(builtIn);
            if (reason != null) {
                metrics.state(PreloadState.NOT_APPLICABLE);
                log.infof("Offline session preloading does not apply on this node: %s", reason);
                return;
            }
            store = KeycloakSessionStore.open(sessionFactory, PROVIDER_ID, config.databaseTimeout());
            reason = store.whyNotApplicable();
            if (reason != null) {
                metrics.state(PreloadState.NOT_APPLICABLE);
                log.infof("Offline session preloading does not apply on this node: %s", reason);
                store.close();
                store = null;
                return;
            }
            if (!store.clientSessionsGrouped()) {
                log.infof("Offline session preloading on %s: offlineClientSessions places a client session by its own key "
                        + "(no ClientSessionKeyGrouper), so every node reads every session and keeps the keys it owns",
                        store.nodeName());
            }
            if (!config.participates(store.nodeName())) {
                store.announceStarted();
                metrics.state(PreloadState.NOT_APPLICABLE);
                log.infof("Offline session preloading: node %s is not in %s=%s; it serves its share lazily",
                        store.nodeName(), PreloadOption.PARTICIPATING_NODES.confName(), config.describe().get("participating-nodes"));
                return;
            }
            coordinator = new PreloadCoordinator(config, store, metrics);
            stopOnShutdown(coordinator);
            var pass = coordinator.start();
            pass.whenComplete((done, failure) -> firstPassOver.complete(null));
            if (!coordinator.hotTierLoaded().isDone()) {
                holdStartup(coordinator.hotTierLoaded(), "its recently refreshed sessions", READINESS_HOLD_FOR_HOT_TIER,
                        PreloadOption.HOLD_READINESS.confName() + "=auto");
            }
            // Peers count this node as started from here, just before it reports ready: after the hot tier's hold, so
            // that their governors' quiet seconds do not run out while it still holds and its traffic is yet to come.
            store.announceStarted();
            if (config.holdReadiness() == ReadinessHold.TRUE) {
                holdStartup(pass, "its share", config.joinTimeout().plus(READINESS_HOLD_FOR_LOAD),
                        String.format("%s plus %d s for the load", PreloadOption.JOIN_TIMEOUT_SECONDS.confName(),
                                READINESS_HOLD_FOR_LOAD.toSeconds()));
            }
        } catch (RuntimeException | LinkageError e) {
            // LinkageError: Keycloak internals differ from those this jar was built against. Sessions are served
            // by the built-in factory whatever happens here.
            metrics.state(PreloadState.FAILED);
            log.errorf(e, "Offline session preloading could not start on this node; sessions are loaded lazily");
        } finally {
            if (coordinator == null) {
                firstPassOver.complete(null);
            }
        }
    }

    /**
     * Blocks startup, and so readiness, until {@code loaded} completes or {@code limit} has passed; a SIGTERM meanwhile
     * completes it at once (Quarkus shuts down only once startup has finished).
     */
    private void holdStartup(CompletableFuture<Void> loaded, String what, Duration limit, String limitSource) {
        String hold = PreloadOption.HOLD_READINESS.confName() + "=" + config.holdReadiness().value();
        log.infof("Offline session preloading: startup waits until node %s has loaded %s (%s), at most %d s",
                store.nodeName(), what, hold, limit.toSeconds());
        long start = System.nanoTime();
        try {
            loaded.get(limit.toMillis(), TimeUnit.MILLISECONDS);
            log.infof("Offline session preloading: startup of node %s goes on after %.1f s (%s)", store.nodeName(),
                    (System.nanoTime() - start) / 1e9, hold);
        } catch (TimeoutException e) {
            log.warnf("Offline session preloading: node %s has not loaded %s within %d s (%s); startup goes on and the "
                    + "load continues in the background", store.nodeName(), what, limit.toSeconds(), limitSource);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /**
     * Whether this node preloads, as the option {@code preloading} says for its mode of sessions; says why not if not.
     * Where it does not, this provider opens nothing: the node runs as with preloading=false.
     */
    private boolean preloads() {
        Preloading preloading = config.preloading();
        if (preloading == Preloading.FALSE) {
            log.infof("Offline session preloading is off (%s=false)", PreloadOption.PRELOADING.confName());
            return false;
        }
        if (!preloading.preloads(KeycloakSessionStore.persistentSessions())) {
            log.infof("Offline session preloading is off: with persistent sessions a refresh reads and writes its session's "
                    + "rows whether it is cached or not, and restarts drained their backlog sooner without preloading "
                    + "(%s=auto; true preloads all the same, docs/performance.md)", PreloadOption.PRELOADING.confName());
            return false;
        }
        return true;
    }

    /**
     * Completes once this node's first load pass is over (whatever its outcome), or at once where this node does not
     * preload: the online index build waits for it on MySQL and MariaDB (docs/indexes.md).
     */
    public CompletionStage<Void> firstPassOver() {
        return firstPassOver;
    }

    /**
     * Stops loading as soon as the JVM begins to shut down (SIGTERM), before Keycloak stops its caches and whatever
     * the order in which it closes factories; and lets a startup held for the first pass go on, since Quarkus only
     * stops once startup has finished.
     */
    private void stopOnShutdown(PreloadCoordinator running) {
        shutdownHook = new Thread(running::close, "offline-preload-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Each step runs whatever the one before threw. Keycloak closes the built-in factory itself. */
    @Override
    public void close() {
        try {
            if (coordinator != null) {
                coordinator.close();
                removeShutdownHook();
            }
        } finally {
            coordinator = null;
            try {
                if (store != null) {
                    store.close();
                }
            } finally {
                store = null;
            }
        }
    }

    private void removeShutdownHook() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs (or ran) close() too, which does nothing twice
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

    @Override
    public Map<String, String> getOperationalInfo() {
        Map<String, String> info = new HashMap<>();
        if (builtIn instanceof ServerInfoAwareProviderFactory serverInfo) {
            info.putAll(serverInfo.getOperationalInfo());
        }
        config.describe().forEach((key, value) -> info.put(key, value));
        info.put("active-provider", activeProviderId());
        if (metrics != null) {
            info.put("preload-state", metrics.state().name().toLowerCase());
        }
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
