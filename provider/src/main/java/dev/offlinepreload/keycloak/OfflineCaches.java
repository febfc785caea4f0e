package dev.offlinepreload.keycloak;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.keycloak.KeycloakMinor.EntryExpiry;
import dev.offlinepreload.load.ImportedSession;
import org.infinispan.AdvancedCache;
import org.infinispan.Cache;
import org.infinispan.commons.time.TimeService;
import org.infinispan.configuration.cache.ClusteringConfiguration;
import org.infinispan.configuration.cache.GroupsConfiguration;
import org.infinispan.container.entries.InternalCacheEntry;
import org.infinispan.container.impl.InternalDataContainer;
import org.infinispan.context.Flag;
import org.infinispan.distribution.DistributionManager;
import org.infinispan.distribution.LocalizedCacheTopology;
import org.infinispan.distribution.ch.ConsistentHash;
import org.infinispan.factories.ComponentRegistry;
import org.infinispan.remoting.transport.Address;
import org.infinispan.topology.CacheTopology;
import org.keycloak.models.sessions.infinispan.changes.SessionEntityWrapper;
import org.keycloak.models.sessions.infinispan.entities.AuthenticatedClientSessionEntity;
import org.keycloak.models.sessions.infinispan.entities.EmbeddedClientSessionKey;
import org.keycloak.models.sessions.infinispan.entities.SessionEntity;
import org.keycloak.models.sessions.infinispan.entities.UserSessionEntity;

/**
 * This node's view of the offlineSessions and offlineClientSessions caches: who owns which key, how full they are,
 * local put-if-absent, and removal of entries. Client sessions live in their user session's segment, so one
 * ownership test covers both.
 * <p>
 * The loader's writes are local, owner-only put-if-absent writes straight into each cache's data container
 * ({@link ContainerWriter}); requests keep going through the cache API, and their state always wins.
 * <p>
 * Whether this node holds an entry is read straight from its data container ({@code peek}: no interceptor chain, no
 * lock, no access recorded for eviction), skipping expired entries. A check over every loaded session cost about 5 µs
 * per session through the cache API, a tenth of the whole load of 1M sessions.
 */
final class OfflineCaches {

    /** {@code SessionEntityWrapper(UUID version, Map localMetadata, SessionEntity entity)}, protected. */
    private static final MethodHandle WRAPPER = wrapperConstructor();

    private final AdvancedCache<String, SessionEntityWrapper<UserSessionEntity>> sessions;
    private final AdvancedCache<EmbeddedClientSessionKey, SessionEntityWrapper<AuthenticatedClientSessionEntity>> clientSessions;
    private final InternalDataContainer<String, SessionEntityWrapper<UserSessionEntity>> sessionEntries;
    private final InternalDataContainer<EmbeddedClientSessionKey, SessionEntityWrapper<AuthenticatedClientSessionEntity>> clientSessionEntries;
    private final ContainerWriter<String, SessionEntityWrapper<UserSessionEntity>> sessionWriter;
    private final ContainerWriter<EmbeddedClientSessionKey, SessionEntityWrapper<AuthenticatedClientSessionEntity>> clientSessionWriter;
    private final TimeService time;
    /** Whether a client session lives in its user session's segment ({@link #groupsClientSessions}). */
    private final boolean clientSessionsGrouped;
    /**
     * Whether every node reads every session: where a client session's key has an owner of its own (26.4, or no grouper) and
     * the loader writes the entries itself (persistent sessions), a node must read each session of which it owns any
     * key, and cannot tell which from the session ids (docs/keycloak-minors.md, "26.4").
     */
    private final boolean readsEverySession;

    /** The caches as they are configured: client sessions grouped with their sessions or not ({@link #groupsClientSessions}). */
    static OfflineCaches of(Cache<String, SessionEntityWrapper<UserSessionEntity>> sessions,
                            Cache<EmbeddedClientSessionKey, SessionEntityWrapper<AuthenticatedClientSessionEntity>> clientSessions,
                            boolean persistentSessions) {
        return new OfflineCaches(sessions, clientSessions, groupsClientSessions(clientSessions), persistentSessions);
    }

    OfflineCaches(Cache<String, SessionEntityWrapper<UserSessionEntity>> sessions,
                  Cache<EmbeddedClientSessionKey, SessionEntityWrapper<AuthenticatedClientSessionEntity>> clientSessions,
                  boolean clientSessionsGrouped, boolean persistentSessions) {
        this.clientSessionsGrouped = clientSessionsGrouped;
        this.readsEverySession = !clientSessionsGrouped && persistentSessions;
        this.sessions = sessions.getAdvancedCache().withFlags(Flag.CACHE_MODE_LOCAL, Flag.SKIP_STATISTICS,
                Flag.SKIP_CACHE_LOAD, Flag.SKIP_CACHE_STORE, Flag.SKIP_XSITE_BACKUP);
        this.clientSessions = clientSessions.getAdvancedCache().withFlags(Flag.CACHE_MODE_LOCAL, Flag.SKIP_STATISTICS,
                Flag.SKIP_CACHE_LOAD, Flag.SKIP_CACHE_STORE, Flag.SKIP_XSITE_BACKUP);
        this.sessionEntries = ComponentRegistry.componentOf(sessions, InternalDataContainer.class);
        this.clientSessionEntries = ComponentRegistry.componentOf(clientSessions, InternalDataContainer.class);
        this.sessionWriter = new ContainerWriter<>(this.sessions);
        this.clientSessionWriter = new ContainerWriter<>(this.clientSessions);
        this.time = ComponentRegistry.componentOf(sessions, TimeService.class);
    }

    Cache<?, ?> sessionsCache() {
        return sessions;
    }

    Cache<?, ?> clientSessionsCache() {
        return clientSessions;
    }

    /**
     * Both caches' topology. A pass may start only when both have settled on the same members: offlineClientSessions
     * rebalances on its own schedule, and client sessions put while it still moves segments are dropped when it
     * finishes.
     */
    TopologySnapshot topology() {
        DistributionManager distribution = sessions.getDistributionManager();
        DistributionManager clientDistribution = clientSessions.getDistributionManager();
        if (distribution == null || clientDistribution == null) {
            // Local (non-clustered) caches: this node owns everything.
            return new TopologySnapshot(0, true, List.of(String.valueOf(sessions.getCacheManager().getAddress())), id -> true,
                    1);
        }
        LocalizedCacheTopology topology = distribution.getCacheTopology();
        LocalizedCacheTopology clientTopology = clientDistribution.getCacheTopology();
        boolean stable = settled(distribution, topology) && settled(clientDistribution, clientTopology)
                && Objects.equals(topology.getMembers(), clientTopology.getMembers())
                && samePrimaryOwners(topology.getWriteConsistentHash(), clientTopology.getWriteConsistentHash());
        List<String> members = topology.getMembers().stream().map(String::valueOf).collect(Collectors.toList());
        ConsistentHash hash = topology.getWriteConsistentHash();
        return readsEverySession
                ? new TopologySnapshot(id(topology, clientTopology), stable, members, key -> true, largestShare(hash),
                        ownShare(hash, topology.getLocalAddress()))
                : new TopologySnapshot(id(topology, clientTopology), stable, members,
                        key -> topology.getDistribution(key).isPrimary(), largestShare(hash));
    }

    /**
     * The members of the cluster as the sessions cache sees them now, without {@link #topology()}'s checks; none for
     * local caches (a node without a cluster: Keycloak's dev mode, {@code --cache=local}).
     */
    List<String> members() {
        DistributionManager distribution = sessions.getDistributionManager();
        if (distribution == null) {
            return List.of();
        }
        return distribution.getCacheTopology().getMembers().stream().map(String::valueOf).toList();
    }

    /** {@link #topology()}'s id, without the rest: both caches' topology ids (0 for local caches). */
    long topologyId() {
        DistributionManager distribution = sessions.getDistributionManager();
        DistributionManager clientDistribution = clientSessions.getDistributionManager();
        return distribution == null || clientDistribution == null ? 0
                : id(distribution.getCacheTopology(), clientDistribution.getCacheTopology());
    }

    private static long id(LocalizedCacheTopology topology, LocalizedCacheTopology clientTopology) {
        return ((long) topology.getTopologyId() << 32) | (clientTopology.getTopologyId() & 0xffffffffL);
    }

    /**
     * Whether both caches place every segment on the same primary owner. With the same members they usually do, but
     * not always: right after a paused node left the view, one cache was seen settled with 11 of 256 segments on another
     * owner than in the other (a cluster test, 2026-11-25). A node plans by the sessions cache's owners and writes only what it owns, so
     * the client sessions of such segments would be put by nobody.
     */
    private static boolean samePrimaryOwners(ConsistentHash sessions, ConsistentHash clientSessions) {
        if (sessions.getNumSegments() != clientSessions.getNumSegments()) {
            return false;
        }
        for (int segment = 0; segment < sessions.getNumSegments(); segment++) {
            if (!Objects.equals(sessions.locatePrimaryOwnerForSegment(segment), clientSessions.locatePrimaryOwnerForSegment(segment))) {
                return false;
            }
        }
        return true;
    }

    /** This member's share of the segments it owns as primary (at least one segment's, so that it never divides by 0). */
    private static double ownShare(ConsistentHash hash, Address self) {
        return (double) Math.max(1, hash.getPrimarySegmentsForOwner(self).size()) / hash.getNumSegments();
    }

    /** The share of the segments owned by the member that owns the most as primary. */
    private static double largestShare(ConsistentHash hash) {
        int largest = hash.getMembers().stream().mapToInt(m -> hash.getPrimarySegmentsForOwner(m).size()).max()
                .orElse(hash.getNumSegments());
        return (double) largest / hash.getNumSegments();
    }

    private static boolean settled(DistributionManager distribution, LocalizedCacheTopology topology) {
        return topology.getPhase() == CacheTopology.Phase.NO_REBALANCE && !distribution.isRehashInProgress();
    }

    /** This node's entry for the session, or null. */
    SessionEntityWrapper<UserSessionEntity> session(String userSessionId) {
        return live(sessionEntries.peek(userSessionId));
    }

    boolean hasClientSession(String userSessionId, String clientId) {
        return live(clientSessionEntries.peek(new EmbeddedClientSessionKey(userSessionId, clientId))) != null;
    }

    private <V> V live(InternalCacheEntry<?, V> entry) {
        return entry == null || entry.isExpired(time.wallClockTime()) ? null : entry.getValue();
    }

    /**
     * Whether the session is cached with every client session its entry lists (of those, where client sessions have
     * owners of their own, the ones this node owns). A session whose entry is another node's is never cached here:
     * which of its client sessions are this node's only its rows tell.
     */
    boolean isCached(String userSessionId) {
        SessionEntityWrapper<UserSessionEntity> wrapper = session(userSessionId);
        if (wrapper == null) {
            return false;
        }
        for (String clientId : wrapper.getEntity().getClientSessions()) {
            if (ownsClientSession(userSessionId, clientId) && !hasClientSession(userSessionId, clientId)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether the client-session cache places a client session in its user session's segment: a grouper for its keys,
     * as Keycloak configures from 26.5 on ({@code ClientSessionKeyGrouper}), or a local cache. Asked of the cache, not
     * of the version: Keycloak 26.4 has no such grouper, and a cache configuration file that defines
     * {@code offlineClientSessions} itself replaces Keycloak's on 26.5+ too, grouper and all.
     */
    static boolean groupsClientSessions(Cache<?, ?> clientSessions) {
        ClusteringConfiguration clustering = clientSessions.getCacheConfiguration().clustering();
        GroupsConfiguration groups = clustering.hash().groups();
        return !clustering.cacheMode().isClustered() || groups.enabled()
                && groups.groupers().stream().anyMatch(g -> g.getKeyType().isAssignableFrom(EmbeddedClientSessionKey.class));
    }

    boolean clientSessionsGrouped() {
        return clientSessionsGrouped;
    }

    /**
     * Whether this node counts what became of a session it read (loaded, already cached, expired, gone, skipped): the
     * node that owns its entry. Where each node reads only the sessions it owns that is every session it reads; where
     * every node reads every session (Keycloak 26.4), only the owner counts it, so that the nodes' counts add up to
     * the cluster's.
     */
    boolean countsSession(String userSessionId) {
        DistributionManager distribution = sessions.getDistributionManager();
        return !readsEverySession || distribution == null || distribution.getCacheTopology().getDistribution(userSessionId).isPrimary();
    }

    /**
     * Whether this node is the primary owner of a client session's key, asked only of a session whose entry is this
     * node's: then always where client sessions live with their sessions, and where the caches are local.
     */
    boolean ownsClientSession(String userSessionId, String clientId) {
        DistributionManager distribution = clientSessions.getDistributionManager();
        return clientSessionsGrouped || distribution == null
                || distribution.getCacheTopology().getDistribution(new EmbeddedClientSessionKey(userSessionId, clientId)).isPrimary();
    }

    /**
     * The cache value for an entity, as {@code new SessionEntityWrapper<>(entity)} builds it (a fresh version and
     * empty local metadata) but with the version drawn from {@link ThreadLocalRandom}: the public constructor's
     * {@code UUID.randomUUID()} reads the shared {@code SecureRandom} under its lock, 5% of the loader's CPU at
     * two per session. The version only tells one state of a key from the next (Keycloak's replace compares it);
     * it is no secret.
     */
    @SuppressWarnings("unchecked")
    static <S extends SessionEntity> SessionEntityWrapper<S> wrap(S entity) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        UUID version = new UUID(random.nextLong() & ~0xf000L | 0x4000L, random.nextLong() & ~(3L << 62) | 1L << 63);
        try {
            return (SessionEntityWrapper<S>) WRAPPER.invokeExact(version, (Map<String, String>) new ConcurrentHashMap<String, String>(),
                    (SessionEntity) entity);
        } catch (Throwable e) {
            throw new IllegalStateException("Cannot build a SessionEntityWrapper", e);
        }
    }

    private static MethodHandle wrapperConstructor() {
        try {
            return MethodHandles.privateLookupIn(SessionEntityWrapper.class, MethodHandles.lookup()).findConstructor(
                    SessionEntityWrapper.class, MethodType.methodType(void.class, UUID.class, Map.class, SessionEntity.class));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("SessionEntityWrapper(UUID, Map, SessionEntity) is not there: this jar does not "
                    + "match this Keycloak version", e);
        }
    }

    /** Put-if-absent of a user session's entry; see {@link ContainerWriter}. */
    ContainerWriter.Result<SessionEntityWrapper<UserSessionEntity>> putIfAbsent(String id,
            SessionEntityWrapper<UserSessionEntity> wrapper, EntryExpiry expiry) {
        return sessionWriter.putIfAbsent(id, wrapper, expiry);
    }

    /** @return whether it was put (false: a client session was cached already, or the segment moved away) */
    boolean putIfAbsent(EmbeddedClientSessionKey key, SessionEntityWrapper<AuthenticatedClientSessionEntity> wrapper,
                        EntryExpiry expiry) {
        return clientSessionWriter.putIfAbsent(key, wrapper, expiry).outcome() == ContainerWriter.Outcome.PUT;
    }

    long sessionsMaxCount() {
        return sessions.getCacheConfiguration().memory().maxCount();
    }

    long clientSessionsMaxCount() {
        return clientSessions.getCacheConfiguration().memory().maxCount();
    }

    long localClientSessions() {
        return clientSessions.size();
    }

    /** Removes what the loader put, as its own removal ({@link RemovalWatch#asOwnRemoval}). */
    void evict(List<ImportedSession> imported) {
        RemovalWatch.asOwnRemoval(() -> {
            for (ImportedSession session : imported) {
                for (String clientId : session.clientIds()) {
                    clientSessions.remove(new EmbeddedClientSessionKey(session.id(), clientId));
                }
                sessions.remove(session.id());
            }
        });
    }

    void evictClientSession(String userSessionId, String clientId) {
        RemovalWatch.asOwnRemoval(() -> clientSessions.remove(new EmbeddedClientSessionKey(userSessionId, clientId)));
    }
}
