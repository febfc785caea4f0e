package dev.offlinepreload.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.load.SessionCount;
import org.junit.jupiter.api.Test;

class CapacityLogTest {

    private final List<String> warnings = new ArrayList<>();
    private final List<String> infos = new ArrayList<>();
    private final CapacityLog capacityLog = new CapacityLog(warnings::add, infos::add);

    private static CapacityAdvice advice(long sessions, int members) {
        return CapacityAdvice.of(new SessionCount(sessions, sessions),
                new TopologySnapshot(1, true, List.of("node1", "node2", "node3").subList(0, members), id -> true,
                        1.0 / members), 100, 100, PreloadConfig.parse(Map.<String, String>of()::get, 2));
    }

    @Test
    void warnsOncePerTopologyNotPerPass() {
        capacityLog.afterPass(7, advice(1_000, 2), "node1", 410, true);
        capacityLog.afterPass(7, advice(1_000, 2), "node1", 410, true);
        assertThat(warnings).hasSize(1);

        capacityLog.afterPass(8, advice(1_000, 3), "node1", 243, true);
        assertThat(warnings).hasSize(2);
        assertThat(warnings.get(1)).contains("the caches of 3 nodes take 270");
    }

    @Test
    void saysNothingWhenEverythingFits() {
        capacityLog.afterPass(7, advice(150, 2), "node1", 0, true);
        assertThat(warnings).isEmpty();
    }

    @Test
    void warnsWhenThisNodeLeftSessionsOutThoughTheClusterWouldHoldThem() {
        // 170 fit into 2 × 90, but this node owns more than its 90
        capacityLog.afterPass(7, advice(170, 2), "node1", 4, true);
        assertThat(warnings).singleElement().asString().contains("(4 of them owned by this node)");
    }

    @Test
    void aClusterBelowItsExpectedSizeGetsTheAdviceAtInfo() {
        capacityLog.afterPass(7, advice(1_000, 1), "node1", 900, false);
        assertThat(warnings).isEmpty();
        assertThat(infos).singleElement().asString().contains("the caches of 1 node take 90");

        capacityLog.afterPass(8, advice(1_000, 2), "node1", 410, true);
        assertThat(warnings).hasSize(1);
    }
}
