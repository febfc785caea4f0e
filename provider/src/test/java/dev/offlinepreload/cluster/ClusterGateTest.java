package dev.offlinepreload.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

class ClusterGateTest {

    private final AtomicReference<TopologySnapshot> topology = new AtomicReference<>(snapshot(1, true, "node1"));
    private final AtomicBoolean closing = new AtomicBoolean();
    private final ClusterGate gate = new ClusterGate("node1", topology::get, closing::get);

    private static TopologySnapshot snapshot(int id, boolean stable, String... members) {
        return new TopologySnapshot(id, stable, List.of(members), key -> true, 1.0 / members.length);
    }

    private void after(long millis, TopologySnapshot next) {
        new Thread(() -> {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException ignored) {
                // test helper
            }
            topology.set(next);
        }).start();
    }

    @Test
    void passesAtOnceWhenEnoughNodesAreThereAndTheTopologyIsSettled() throws Exception {
        assertThat(gate.await(1, Duration.ofMinutes(1)).id()).isEqualTo(1);
    }

    @Test
    void waitsForTheExpectedNodes() throws Exception {
        after(300, snapshot(5, true, "node1", "node2", "node3"));
        TopologySnapshot passed = gate.await(3, Duration.ofMinutes(1));
        assertThat(passed.members()).hasSize(3);
    }

    @Test
    void waitsForARebalanceToFinishEvenWithEnoughNodes() throws Exception {
        topology.set(snapshot(2, false, "node1", "node2"));
        after(300, snapshot(3, true, "node1", "node2"));
        assertThat(gate.await(2, Duration.ofMinutes(1)).id()).isEqualTo(3);
    }

    @Test
    void onTimeoutGoesOnWithTheNodesPresent() throws Exception {
        topology.set(snapshot(2, true, "node1", "node2"));
        long start = System.nanoTime();
        TopologySnapshot passed = gate.await(3, Duration.ofMillis(400));
        assertThat(passed.members()).containsExactly("node1", "node2");
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(Duration.ofMillis(400).toNanos());
    }

    @Test
    void returnsNullWhenTheNodeShutsDown() throws Exception {
        after(0, snapshot(1, true, "node1"));
        closing.set(true);
        assertThat(gate.await(3, Duration.ofMinutes(1))).isNull();
    }
}
