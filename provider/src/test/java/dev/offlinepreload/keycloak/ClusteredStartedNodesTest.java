package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.infinispan.manager.DefaultCacheManager;
import org.junit.jupiter.api.Test;

/** {@link StartedNodes} on Keycloak's replicated work cache, over a real JGroups cluster of two members. */
class ClusteredStartedNodesTest {

    private static StartedNodes startedNodes(DefaultCacheManager member) {
        return new StartedNodes(member.getCache(TestCluster.WORK));
    }

    @Test
    void everyMemberSeesWhoHasStartedAndAMemberThatLeftCountsAgainOnlyOnceItHasStartedAgain() {
        try (TestCluster cluster = TestCluster.start(2)) {
            StartedNodes a = startedNodes(cluster.member(0));
            StartedNodes b = startedNodes(cluster.member(1));
            List<String> both = List.of("A", "B");
            assertThat(a.allStarted(both, both)).isFalse();

            a.announce("A");
            TestCluster.await().until(() -> b.allStarted(List.of("A"), both));
            assertThat(b.allStarted(both, both)).as("B has not said it started").isFalse();

            b.announce("B");
            TestCluster.await().until(() -> a.allStarted(both, both) && b.allStarted(both, both));

            // B leaves (its marker stays in A's copy) and comes back: only its new start counts
            assertThat(a.allStarted(List.of("A"), List.of("A"))).isTrue();
            assertThat(a.allStarted(both, both)).as("B's marker of before it left").isFalse();
        }
    }
}
