package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.offlinepreload.keycloak.ContainerWriter.Outcome;
import dev.offlinepreload.keycloak.KeycloakMinor.EntryExpiry;
import dev.offlinepreload.load.ImportedSession;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.factories.ComponentRegistry;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.util.concurrent.DataOperationOrderer;
import org.infinispan.util.concurrent.DataOperationOrderer.Operation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.keycloak.models.sessions.infinispan.changes.SessionEntityWrapper;
import org.keycloak.models.sessions.infinispan.entities.AuthenticatedClientSessionEntity;
import org.keycloak.models.sessions.infinispan.entities.EmbeddedClientSessionKey;
import org.keycloak.models.sessions.infinispan.entities.UserSessionEntity;

/** On real (local) Infinispan caches: what counts as cached, put-if-absent into the data container, and eviction. */
class OfflineCachesTest {

    private final DefaultCacheManager manager = new DefaultCacheManager();
    private final OfflineCaches caches;

    OfflineCachesTest() {
        // bounded, as persistent sessions' offline caches always are
        manager.defineConfiguration("sessions", new ConfigurationBuilder().memory().maxCount(1000).build());
        manager.defineConfiguration("clientSessions", new ConfigurationBuilder().memory().maxCount(1000).build());
        caches = OfflineCaches.of(manager.getCache("sessions"), manager.getCache("clientSessions"), true);
    }

    @AfterEach
    void stop() {
        manager.stop();
    }

    private void putSession(String id, String... listedClients) {
        UserSessionEntity entity = new UserSessionEntity(id);
        entity.getClientSessions().addAll(List.of(listedClients));
        caches.putIfAbsent(id, OfflineCaches.wrap(entity), TestCluster.EXPIRY);
    }

    private boolean putClientSession(String id, String client) {
        AuthenticatedClientSessionEntity entity = new AuthenticatedClientSessionEntity();
        entity.setUserSessionId(id);
        entity.setClientId(client);
        return caches.putIfAbsent(new EmbeddedClientSessionKey(id, client), OfflineCaches.wrap(entity), TestCluster.EXPIRY);
    }

    @Test
    void localCachesCountAsClientSessionsLivingWithTheirSessions() {
        assertThat(caches.clientSessionsGrouped()).isTrue();
    }

    @Test
    void aSessionCountsAsCachedOnlyWithEveryClientSessionItsEntryLists() {
        putSession("s1", "app-1", "app-2", "app-3");
        putClientSession("s1", "app-1");
        putClientSession("s1", "app-3");
        assertThat(caches.isCached("s1")).as("app-2's client session is missing").isFalse();

        putClientSession("s1", "app-2");
        assertThat(caches.isCached("s1")).isTrue();
        assertThat(caches.isCached("s2")).as("not in the cache at all").isFalse();
    }

    @Test
    void putIfAbsentNeverReplacesAnEntry() {
        putSession("s1", "app-1");
        UserSessionEntity newer = new UserSessionEntity("s1");
        var existing = caches.putIfAbsent("s1", OfflineCaches.wrap(newer), TestCluster.EXPIRY);
        assertThat(existing.outcome()).isEqualTo(Outcome.PRESENT);
        assertThat(existing.present().getEntity()).isNotSameAs(newer).isSameAs(caches.session("s1").getEntity());
        assertThat(putClientSession("s1", "app-1")).isTrue();
        assertThat(putClientSession("s1", "app-1")).as("second put of the same client session").isFalse();
    }

    @Test
    void aWriteWaitsForAWriteOrRemovalOfTheSameKeyThatIsStillBeingCommitted() throws Exception {
        DataOperationOrderer orderer = ComponentRegistry.componentOf(manager.getCache("sessions"), DataOperationOrderer.class);
        CompletableFuture<Operation> removal = new CompletableFuture<>(); // a logout's removal, its listeners not yet told
        assertThat(orderer.orderOn("s1", removal)).isNull();
        CompletableFuture<Outcome> put = CompletableFuture.supplyAsync(
                () -> caches.putIfAbsent("s1", OfflineCaches.wrap(new UserSessionEntity("s1")), TestCluster.EXPIRY).outcome());
        Thread.sleep(300);
        assertThat(put).as("the loader's write waits for the removal").isNotDone();
        orderer.completeOperation("s1", removal, Operation.REMOVE);
        assertThat(put.get(5, TimeUnit.SECONDS)).isEqualTo(Outcome.PUT);
        assertThat(orderer.getCurrentStage("s1")).as("the loader's own operation is over").isNull();
    }

    @Test
    void theLoadersEntriesAreWhatTheCacheApiReadsWithTheirLifespanAndNoMaxIdle() {
        putSession("s1");
        var entry = manager.<String, Object>getCache("sessions").getAdvancedCache().getCacheEntry("s1");
        assertThat(entry).isNotNull();
        assertThat(entry.getLifespan()).isEqualTo(60_000);
        assertThat(entry.getMaxIdle()).isEqualTo(-1);
    }

    @Test
    void wrappedEntitiesGetTheirOwnVersionAndEmptyLocalMetadata() {
        UserSessionEntity entity = new UserSessionEntity("s1");
        SessionEntityWrapper<UserSessionEntity> a = OfflineCaches.wrap(entity);
        SessionEntityWrapper<UserSessionEntity> b = OfflineCaches.wrap(entity);
        assertThat(a.getEntity()).isSameAs(entity);
        assertThat(a.getVersion()).isNotNull().isNotEqualTo(b.getVersion());
        assertThat(a.getVersion().version()).isEqualTo(4);
        assertThat(a.getVersion().variant()).isEqualTo(2);
        assertThat(a.getLocalMetadata()).isEmpty();
        a.putLocalMetadataNoteInt("note", 1); // Keycloak writes into it
        assertThat(b.getLocalMetadata()).as("not shared").isEmpty();
    }

    @Test
    void anExpiredEntryCountsAsAbsent() throws InterruptedException {
        UserSessionEntity old = new UserSessionEntity("s1");
        assertThat(caches.putIfAbsent("s1", OfflineCaches.wrap(old), new EntryExpiry(1, EntryExpiry.NONE)).outcome()).isEqualTo(Outcome.PUT);
        Thread.sleep(20);
        UserSessionEntity fresh = new UserSessionEntity("s1");
        assertThat(caches.putIfAbsent("s1", OfflineCaches.wrap(fresh), TestCluster.EXPIRY).outcome()).as("the expired entry is replaced")
                .isEqualTo(Outcome.PUT);
        assertThat(caches.session("s1").getEntity()).isSameAs(fresh);
    }

    @Test
    void evictionTakesOutTheSessionAndTheClientSessionsItPut() {
        putSession("s1", "app-1", "app-2");
        putClientSession("s1", "app-1");
        putClientSession("s1", "app-2");
        caches.evict(List.of(new ImportedSession("s1", List.of("app-1", "app-2"))));
        assertThat(caches.session("s1")).isNull();
        assertThat(caches.hasClientSession("s1", "app-1")).isFalse();
        assertThat(caches.hasClientSession("s1", "app-2")).isFalse();
        assertThat(caches.localClientSessions()).isZero();
    }

    @Test
    void localCachesAreOneStableTopologyThatOwnsEverything() {
        var topology = caches.topology();
        assertThat(topology.stable()).isTrue();
        assertThat(topology.owns().test("any")).isTrue();
        assertThat(caches.members()).as("no cluster: the store counts the node itself").isEmpty();
    }
}
