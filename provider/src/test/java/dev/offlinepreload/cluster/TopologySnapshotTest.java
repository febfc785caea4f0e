package dev.offlinepreload.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class TopologySnapshotTest {

    @Test
    void aNodeThatPlansWhatItOwnsPlansWhatItsCachesHold() {
        TopologySnapshot owned = new TopologySnapshot(1, true, List.of("node1", "node2", "node3"), id -> true, 0.34);
        assertThat(owned.planned(90_000)).isEqualTo(90_000);
    }

    @Test
    void aNodeThatReadsEverySessionPlansWhatItsShareOfTheEntriesLetsItHold() {
        // Keycloak 26.4: a node that owns a quarter of the key space keeps a quarter of the entries of what it reads
        TopologySnapshot readsAll = new TopologySnapshot(1, true, List.of("node1", "node2", "node3"), id -> true, 0.34, 0.25);
        assertThat(readsAll.planned(90_000)).isEqualTo(360_000);
        assertThat(readsAll.planned(Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
    }
}
