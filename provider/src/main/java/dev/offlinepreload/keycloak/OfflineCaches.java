package dev.offlinepreload.keycloak;

import java.util.List;
import java.util.stream.Collectors;

import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.load.ImportedSession;
import org.infinispan.AdvancedCache;
import org.infinispan.Cache;
import org.infinispan.context.Flag;
import org.infinispan.distribution.DistributionManager;
import org.infinispan.distribution.LocalizedCacheTopology;
import org.infinispan.topology.CacheTopology;
import org.keycloak.models.sessions.infinispan.entities.EmbeddedClientSessionKey;

/**
 * This node's view of the offlineSessions and offlineClientSessions caches: who owns which key, how full they are,
 * and removal of entries. Client sessions live in their user session's segment, so one ownership test covers both.
 */
final class OfflineCaches {

    private final AdvancedCache<String, ?> sessions;
    private final AdvancedCache<EmbeddedClientSessionKey, ?> clientSessions;

    OfflineCaches(Cache<String, ?> sessions, Cache<EmbeddedClientSessionKey, ?> clientSessions) {
        // Local-only and statistics-neutral: the loader's lookups must not count as cache hits or misses.
        this.sessions = sessions.getAdvancedCache().withFlags(Flag.CACHE_MODE_LOCAL, Flag.SKIP_STATISTICS);
        this.clientSessions = clientSessions.getAdvancedCache().withFlags(Flag.CACHE_MODE_LOCAL, Flag.SKIP_STATISTICS);
    }

    TopologySnapshot topology() {
        DistributionManager distribution = sessions.getDistributionManager();
        if (distribution == null) {
            // Local (non-clustered) cache: this node owns everything.
            return new TopologySnapshot(0, true, List.of(String.valueOf(sessions.getCacheManager().getAddress())), id -> true);
        }
        LocalizedCacheTopology topology = distribution.getCacheTopology();
        boolean stable = topology.getPhase() == CacheTopology.Phase.NO_REBALANCE && !distribution.isRehashInProgress();
        List<String> members = topology.getMembers().stream().map(String::valueOf).collect(Collectors.toList());
        return new TopologySnapshot(topology.getTopologyId(), stable, members, id -> topology.getDistribution(id).isPrimary());
    }

    boolean isCached(String userSessionId) {
        return sessions.containsKey(userSessionId);
    }

    long sessionsMaxCount() {
        return sessions.getCacheConfiguration().memory().maxCount();
    }

    long clientSessionsMaxCount() {
        return clientSessions.getCacheConfiguration().memory().maxCount();
    }

    long localSessions() {
        return sessions.size();
    }

    long localClientSessions() {
        return clientSessions.size();
    }

    void evict(List<ImportedSession> imported) {
        for (ImportedSession session : imported) {
            for (String clientId : session.clientIds()) {
                evictClientSession(session.id(), clientId);
            }
            sessions.remove(session.id());
        }
    }

    void evictClientSession(String userSessionId, String clientId) {
        clientSessions.remove(new EmbeddedClientSessionKey(userSessionId, clientId));
    }
}
