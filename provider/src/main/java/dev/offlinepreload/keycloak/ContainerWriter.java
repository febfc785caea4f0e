package dev.offlinepreload.keycloak;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import dev.offlinepreload.keycloak.KeycloakMinor.EntryExpiry;
import org.infinispan.AdvancedCache;
import org.infinispan.commons.time.TimeService;
import org.infinispan.container.entries.InternalCacheEntry;
import org.infinispan.container.impl.InternalDataContainer;
import org.infinispan.distribution.DistributionManager;
import org.infinispan.distribution.ch.KeyPartitioner;
import org.infinispan.factories.ComponentRegistry;
import org.infinispan.metadata.EmbeddedMetadata;
import org.infinispan.metadata.Metadata;
import org.infinispan.statetransfer.StateTransferLock;
import org.infinispan.util.concurrent.DataOperationOrderer;
import org.infinispan.util.concurrent.DataOperationOrderer.Operation;

/**
 * The loader's write into one cache: put-if-absent straight into this node's data container, with what the cache
 * API's commit of a local write guarantees, and nothing else. JFR on a 1M load: the command, interceptor chain and
 * key lock around the container write were half of the put, a fifth of the loader threads' CPU.
 * <p>
 * As Infinispan's own commit of a write ({@code ClusteringDependentLogic}), each write
 * <ul>
 * <li>is ordered after any write, removal or eviction of the same key still being committed or notified
 * ({@link DataOperationOrderer}): a logout's removal is in its listeners' hands (the loader's {@code RemovalWatch}
 * among them) before the loader can fill the key again. (The orderer is active on bounded containers, which
 * persistent sessions, the only mode that writes here, always are.)</li>
 * <li>checks that this node owns the key's segment for writing and writes under the shared topology lock: a topology
 * that takes the segment away is installed before or after the write, never between the check and the write, and
 * the segment's removal then takes the entry with it. No entry outlives its segment on this node.</li>
 * <li>is one atomic {@code compute} on the key: an entry that is there and not expired stays (a request cached the
 * session first); a request that commits later overwrites the loader's entry.</li>
 * <li>builds the entry with the container's own factory and the metadata a cache put with this lifespan and
 * max-idle builds.</li>
 * </ul>
 * No listener is notified of the loader's writes (Keycloak has none for these caches' writes), and no statistics.
 */
final class ContainerWriter<K, V> {

    /** What a put did. */
    enum Outcome { PUT, PRESENT, NOT_OWNED }

    /**
     * @param present the entry's value when {@link Outcome#PRESENT}
     */
    record Result<V>(Outcome outcome, V present) {
    }

    private final InternalDataContainer<K, V> container;
    private final KeyPartitioner segments;
    private final DistributionManager distribution;
    private final StateTransferLock topologyLock;
    private final DataOperationOrderer orderer;
    private final TimeService time;

    /** @param cache a clustered cache, or a local one (which owns every key) */
    @SuppressWarnings("unchecked")
    ContainerWriter(AdvancedCache<K, V> cache) {
        this.container = ComponentRegistry.componentOf(cache, InternalDataContainer.class);
        this.segments = ComponentRegistry.componentOf(cache, KeyPartitioner.class);
        this.distribution = cache.getDistributionManager();
        this.topologyLock = distribution == null ? null : ComponentRegistry.componentOf(cache, StateTransferLock.class);
        this.orderer = ComponentRegistry.componentOf(cache, DataOperationOrderer.class);
        this.time = ComponentRegistry.componentOf(cache, TimeService.class);
    }

    Result<V> putIfAbsent(K key, V value, EntryExpiry expiry) {
        int segment = segments.getSegment(key);
        Metadata metadata = new EmbeddedMetadata.Builder().lifespan(expiry.lifespanMs()).maxIdle(expiry.maxIdleMs()).build();
        CompletableFuture<Operation> ours = new CompletableFuture<>();
        CompletionStage<Operation> before = orderer == null ? null : orderer.orderOn(key, ours);
        try {
            if (before != null) {
                before.toCompletableFuture().join();
            }
            return putOwned(segment, key, value, metadata);
        } finally {
            if (orderer != null) {
                orderer.completeOperation(key, ours, Operation.WRITE);
            }
        }
    }

    private Result<V> putOwned(int segment, K key, V value, Metadata metadata) {
        if (topologyLock != null) {
            topologyLock.acquireSharedTopologyLock();
        }
        try {
            if (distribution != null && !distribution.getCacheTopology().isSegmentWriteOwner(segment)) {
                return new Result<>(Outcome.NOT_OWNED, null);
            }
            long now = time.wallClockTime();
            boolean[] put = {false};
            InternalCacheEntry<K, V> entry = container.compute(segment, key, (k, old, factory) -> {
                if (old != null && !old.isExpired(now)) {
                    return old;
                }
                put[0] = true;
                return factory.create(k, value, metadata);
            });
            if (put[0]) {
                return new Result<>(Outcome.PUT, null);
            }
            return entry == null ? new Result<>(Outcome.NOT_OWNED, null) : new Result<>(Outcome.PRESENT, entry.getValue());
        } finally {
            if (topologyLock != null) {
                topologyLock.releaseSharedTopologyLock();
            }
        }
    }
}
