package dev.offlinepreload.keycloak;


import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.offlinepreload.keycloak.KeycloakMinor.EntryExpiry;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.infinispan.AdvancedCache;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.configuration.global.ShutdownHookBehavior;
import org.infinispan.container.entries.InternalCacheEntry;
import org.infinispan.container.impl.InternalDataContainer;
import org.infinispan.distribution.LocalizedCacheTopology;
import org.infinispan.distribution.ch.KeyPartitioner;
import org.infinispan.factories.ComponentRegistry;
import org.infinispan.factories.GlobalComponentRegistry;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;
import org.infinispan.topology.CacheTopology;
import org.infinispan.topology.LocalTopologyManager;
import org.keycloak.connections.infinispan.InfinispanConnectionProvider;
import org.keycloak.marshalling.Marshalling;
import org.keycloak.models.sessions.infinispan.changes.SessionEntityWrapper;
import org.keycloak.models.sessions.infinispan.entities.AuthenticatedClientSessionEntity;
import org.keycloak.models.sessions.infinispan.entities.EmbeddedClientSessionKey;
import org.keycloak.models.sessions.infinispan.entities.UserSessionEntity;
import org.keycloak.spi.infinispan.impl.embedded.CacheConfigurator;

/**
 * Infinispan members in this JVM that form one JGroups cluster over 127.0.0.1 ({@code jgroups-loopback.xml}: TCP,
 * in-JVM discovery, no multicast), each with the offline session caches as Keycloak 26.7 configures them for
 * persistent user sessions: its own default configuration of each cache (distributed, one owner, bounded, client
 * sessions grouped with their user session), without state transfer, and Keycloak's own ProtoStream schemas for what
 * crosses the wire. Only the segments are fewer than Keycloak's 256, so that a test can hold a write in every segment
 * a member owns.
 */
final class TestCluster implements AutoCloseable {

    static final String SESSIONS = InfinispanConnectionProvider.OFFLINE_USER_SESSION_CACHE_NAME;
    static final String CLIENT_SESSIONS = InfinispanConnectionProvider.OFFLINE_CLIENT_SESSION_CACHE_NAME;
    static final String WORK = InfinispanConnectionProvider.WORK_CACHE_NAME;
    static final int SEGMENTS = 16;
    static final EntryExpiry EXPIRY = new EntryExpiry(60_000, EntryExpiry.NONE);
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final String name = "offline-preload-test-" + UUID.randomUUID();
    private final List<DefaultCacheManager> members = new CopyOnWriteArrayList<>();
    /** Whether a client session's key lives in its user session's segment (Keycloak 26.5+), or has an owner of its own. */
    private final boolean clientSessionsGrouped;

    private TestCluster(boolean clientSessionsGrouped) {
        this.clientSessionsGrouped = clientSessionsGrouped;
    }

    /** A cluster of that many members, both caches started on each and settled. */
    static TestCluster start(int size) {
        return start(size, true);
    }

    /**
     * The same, with client sessions grouped with their user sessions as Keycloak 26.5+ configures them, or (false)
     * without a grouper, as Keycloak 26.4 has them.
     */
    static TestCluster start(int size, boolean clientSessionsGrouped) {
        TestCluster cluster = new TestCluster(clientSessionsGrouped);
        try {
            for (int i = 0; i < size; i++) {
                startCaches(cluster.startMember());
            }
            cluster.awaitSettled();
            return cluster;
        } catch (RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
    }

    /** A new member of the JGroups cluster; its caches join when {@link #startCaches} starts them. */
    DefaultCacheManager startMember() {
        GlobalConfigurationBuilder global = GlobalConfigurationBuilder.defaultClusteredBuilder();
        global.transport().clusterName(name).nodeName(String.valueOf((char) ('A' + members.size())))
                .addProperty(JGroupsTransport.CONFIGURATION_FILE, "jgroups-loopback.xml");
        global.shutdown().hookBehavior(ShutdownHookBehavior.DONT_REGISTER);
        Marshalling.configure(global);
        DefaultCacheManager member = new DefaultCacheManager(global.build());
        members.add(member);
        member.defineConfiguration(SESSIONS, offlineCache(SESSIONS).build());
        member.defineConfiguration(CLIENT_SESSIONS, offlineCache(CLIENT_SESSIONS).build());
        member.defineConfiguration(WORK, CacheConfigurator.getCacheConfiguration(WORK, true).build());
        return member;
    }

    private ConfigurationBuilder offlineCache(String cacheName) {
        ConfigurationBuilder builder = CacheConfigurator.getCacheConfiguration(cacheName, true);
        if (!clientSessionsGrouped) {
            builder.clustering().hash().groups().enabled(false).clearGroupers();
        }
        // as CacheConfigurator.configureSessionsCachesForPersistentSessions does for the session caches
        builder.clustering().stateTransfer().fetchInMemoryState(false);
        builder.clustering().hash().numSegments(SEGMENTS);
        return builder;
    }

    /** Starts (joins) both offline caches of the member; returns once it has joined them. */
    static void startCaches(DefaultCacheManager member) {
        member.getCache(SESSIONS);
        member.getCache(CLIENT_SESSIONS);
    }

    List<DefaultCacheManager> members() {
        return List.copyOf(members);
    }

    DefaultCacheManager member(int index) {
        return members.get(index);
    }

    /**
     * Waits until every member runs both caches, and on each member each cache's topology has every member, no
     * rebalance, and is the stable one (the coordinator announces that after a rebalance has ended, and a member
     * handles it after it has finished with the topology before, stale entries removed).
     */
    void awaitSettled() {
        await().until(this::settled);
    }

    /** How the cluster tests wait for a condition: polled every 10 ms, for at most {@link #TIMEOUT}. */
    static ConditionFactory await() {
        return Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(10));
    }

    private boolean settled() {
        for (String cacheName : List.of(SESSIONS, CLIENT_SESSIONS)) {
            Integer topologyId = null;
            for (DefaultCacheManager member : members) {
                if (!member.isRunning(cacheName)) {
                    return false;
                }
                LocalizedCacheTopology topology = topology(member, cacheName);
                CacheTopology stable = GlobalComponentRegistry.componentOf(member, LocalTopologyManager.class)
                        .getStableCacheTopology(cacheName);
                if (topology.getMembers().size() != members.size() || topology.getPhase() != CacheTopology.Phase.NO_REBALANCE
                        || stable == null || stable.getTopologyId() != topology.getTopologyId()
                        || topologyId != null && topologyId != topology.getTopologyId()) {
                    return false;
                }
                topologyId = topology.getTopologyId();
            }
        }
        return true;
    }

    @Override
    public void close() {
        List<DefaultCacheManager> stopping = new ArrayList<>(members);
        for (int i = stopping.size() - 1; i >= 0; i--) {
            stopping.get(i).stop();
        }
        members.clear();
    }

    // ---- one member's view

    static AdvancedCache<String, SessionEntityWrapper<UserSessionEntity>> sessions(DefaultCacheManager member) {
        return member.<String, SessionEntityWrapper<UserSessionEntity>>getCache(SESSIONS).getAdvancedCache();
    }

    static AdvancedCache<EmbeddedClientSessionKey, SessionEntityWrapper<AuthenticatedClientSessionEntity>> clientSessions(
            DefaultCacheManager member) {
        return member.<EmbeddedClientSessionKey, SessionEntityWrapper<AuthenticatedClientSessionEntity>>getCache(CLIENT_SESSIONS)
                .getAdvancedCache();
    }

    /** The member's offline caches as the loader sees them. */
    static OfflineCaches offlineCaches(DefaultCacheManager member) {
        return OfflineCaches.of(sessions(member), clientSessions(member), true);
    }

    static LocalizedCacheTopology topology(DefaultCacheManager member, String cacheName) {
        return member.getCache(cacheName).getAdvancedCache().getDistributionManager().getCacheTopology();
    }

    /** Whether the member is the (only) owner of the user session's key, in its current topology. */
    static boolean owns(DefaultCacheManager member, String userSessionId) {
        return topology(member, SESSIONS).getDistribution(userSessionId).isPrimary();
    }

    /** The first of {@code prefix-0, prefix-1, ...} that the member owns. */
    static String sessionOwnedBy(DefaultCacheManager member, String prefix) {
        for (int i = 0; ; i++) {
            if (owns(member, prefix + "-" + i)) {
                return prefix + "-" + i;
            }
        }
    }

    /** One user session id in each segment the member owns, from {@code prefix-0, prefix-1, ...}. */
    static List<String> oneSessionPerSegmentOwnedBy(DefaultCacheManager member, String prefix) {
        LocalizedCacheTopology topology = topology(member, SESSIONS);
        int owned = topology.getLocalPrimarySegments().size();
        List<String> ids = new ArrayList<>();
        boolean[] seen = new boolean[SEGMENTS];
        for (int i = 0; ids.size() < owned; i++) {
            String id = prefix + "-" + i;
            int segment = topology.getSegment(id);
            if (topology.getDistribution(id).isPrimary() && !seen[segment]) {
                seen[segment] = true;
                ids.add(id);
            }
        }
        return ids;
    }

    /** Whether the member's data container holds an entry for the key (whoever owns it). */
    static boolean holds(DefaultCacheManager member, String cacheName, Object key) {
        return container(member, cacheName).peek(key) != null;
    }

    /** The keys in the member's data container whose segment it does not own (for writing) in its current topology. */
    static List<Object> strays(DefaultCacheManager member, String cacheName) {
        LocalizedCacheTopology topology = topology(member, cacheName);
        KeyPartitioner segments = ComponentRegistry.componentOf(member.getCache(cacheName), KeyPartitioner.class);
        List<Object> strays = new ArrayList<>();
        for (InternalCacheEntry<Object, Object> entry : container(member, cacheName)) {
            if (!topology.isSegmentWriteOwner(segments.getSegment(entry.getKey()))) {
                strays.add(entry.getKey());
            }
        }
        return strays;
    }

    @SuppressWarnings("unchecked")
    private static InternalDataContainer<Object, Object> container(DefaultCacheManager member, String cacheName) {
        return ComponentRegistry.componentOf(member.getCache(cacheName), InternalDataContainer.class);
    }

    // ---- entries as the loader builds them

    static SessionEntityWrapper<UserSessionEntity> userSession(String id, String... clientIds) {
        UserSessionEntity entity = new UserSessionEntity(id);
        entity.setRealmId("realm");
        entity.setUser("user-" + id);
        entity.getClientSessions().addAll(List.of(clientIds));
        return OfflineCaches.wrap(entity);
    }

    static SessionEntityWrapper<AuthenticatedClientSessionEntity> clientSession(String userSessionId, String clientId) {
        AuthenticatedClientSessionEntity entity = new AuthenticatedClientSessionEntity();
        entity.setUserSessionId(userSessionId);
        entity.setClientId(clientId);
        entity.setRealmId("realm");
        return OfflineCaches.wrap(entity);
    }

    static EmbeddedClientSessionKey clientKey(String userSessionId, String clientId) {
        return new EmbeddedClientSessionKey(userSessionId, clientId);
    }

    /** The value's version, or null for no value: what tells one cached state of a key from another. */
    static UUID version(SessionEntityWrapper<?> value) {
        return value == null ? null : value.getVersion();
    }
}
