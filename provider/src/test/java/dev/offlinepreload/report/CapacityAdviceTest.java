package dev.offlinepreload.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.stream.IntStream;

import dev.offlinepreload.cluster.TopologySnapshot;
import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.load.SessionCount;
import org.junit.jupiter.api.Test;

class CapacityAdviceTest {

    private static final int SEGMENTS = 256;

    private static PreloadConfig config(String... keyValues) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            values.put(keyValues[i], keyValues[i + 1]);
        }
        return PreloadConfig.parse(values::get, 2);
    }

    /** Segments dealt round-robin, as evenly as they divide: the largest owner has ceil(256 / members). */
    private static TopologySnapshot topology(int members) {
        return new TopologySnapshot(1, true, IntStream.rangeClosed(1, members).mapToObj(i -> "node" + i).toList(),
                id -> true, (double) ((SEGMENTS + members - 1) / members) / SEGMENTS);
    }

    @Test
    void maxCountHoldingIsTheSmallestMaxCountWhoseLimitHoldsTheEntries() {
        for (int headroom : new int[] {0, 10, 33, 90}) {
            PreloadConfig config = config("capacity-headroom-percent", Integer.toString(headroom));
            for (long entries = 1; entries <= 3000; entries++) {
                long maxCount = CapacityAdvice.maxCountHolding(entries, headroom);
                assertThat(config.cacheLimit(maxCount)).as("%d entries, %d%%", entries, headroom).isGreaterThanOrEqualTo(entries);
                assertThat(config.cacheLimit(maxCount - 1)).as("%d entries, %d%%", entries, headroom).isLessThan(entries);
            }
        }
        // the headroom is rounded down: 9,999 less 999 holds 9,000
        assertThat(CapacityAdvice.maxCountHolding(9000, 10)).isEqualTo(9_999);
    }

    @Test
    void aMillionSessionsOnThreeDefaultNodes() {
        CapacityAdvice advice = CapacityAdvice.of(new SessionCount(1_000_000, 1_000_000), topology(3), 10_000, 10_000,
                config());

        assertThat(advice.nodeCapacity()).isEqualTo(9_000);
        assertThat(advice.clusterCapacity()).isEqualTo(27_000);
        assertThat(advice.fits()).isFalse();
        // the largest owner's share is 86/256 = 335,938 sessions, plus 4 standard deviations (1,889), over 90%
        assertThat(advice.sessionsMaxCount()).isEqualTo(CapacityAdvice.maxCountHolding(337_827, 10)).isEqualTo(375_363);
        assertThat(advice.clientSessionsMaxCount()).isEqualTo(375_363);
        assertThat(advice.maxSessionsPerNode()).isZero();
        // 375,363 × (1495 + 1130) bytes
        assertThat(advice.heapBytesPerNode() >> 20).isEqualTo(939);
    }

    @Test
    void clientSessionsPerSessionSizeTheClientSessionCache() {
        // 3 apps per user: the client-session cache is the bound, 9,000 client sessions = 3,000 sessions
        CapacityAdvice advice = CapacityAdvice.of(new SessionCount(5_000, 15_000), topology(1), 10_000, 10_000, config());

        assertThat(advice.nodeCapacity()).isEqualTo(3_000);
        assertThat(advice.fits()).isFalse();
        assertThat(advice.sessionsMaxCount()).as("already large enough: kept").isEqualTo(10_000);
        assertThat(advice.clientSessionsMaxCount()).isEqualTo(16_666);
        assertThat(CapacityAdvice.of(new SessionCount(3_000, 9_000), topology(1), 10_000, 10_000, config()).fits()).isTrue();
    }

    @Test
    void aPerNodeMaximumBelowTheShareIsNamedToo() {
        CapacityAdvice advice = CapacityAdvice.of(new SessionCount(2_000, 2_000), topology(1), 10_000, 10_000,
                config("max-sessions-per-node", "500"));

        assertThat(advice.nodeCapacity()).isEqualTo(500);
        assertThat(advice.maxSessionsPerNode()).isEqualTo(2_000);
        assertThat(advice.warning("node1", 1_500)).contains("spi-user-sessions--offline-preload--max-sessions-per-node=2000");
        assertThat(CapacityAdvice.of(new SessionCount(2_000, 2_000), topology(1), 10_000, 10_000,
                config("max-sessions-per-node", "5000")).maxSessionsPerNode()).isZero();
    }

    @Test
    void unboundedCachesTakeEverything() {
        CapacityAdvice advice = CapacityAdvice.of(new SessionCount(50_000_000, 90_000_000), topology(2), -1, -1, config());

        assertThat(advice.nodeCapacity()).isEqualTo(Long.MAX_VALUE);
        assertThat(advice.clusterCapacity()).isEqualTo(Long.MAX_VALUE);
        assertThat(advice.fits()).isTrue();
    }

    @Test
    void theWarningSaysTheNumbersAndTheFix() {
        CapacityAdvice advice = CapacityAdvice.of(new SessionCount(3_000, 6_000), topology(2), 600, 600, config());

        assertThat(advice.warning("node2", 1_230)).startsWith("Offline session preload on node2: the database holds 3,000 "
                        + "offline sessions that have not expired (6,000 client sessions, 2.00 per session), the caches of "
                        + "2 nodes take 540 of them (270 per node, with max-count less 10% headroom). The 2,460 least "
                        + "recently used (1,230 of them owned by this node) stay in the database")
                .contains("cache-embedded-offline-sessions-max-count=" + advice.sessionsMaxCount() + " ")
                .contains("cache-embedded-offline-client-sessions-max-count=" + advice.clientSessionsMaxCount() + " ")
                .contains("KC_CACHE_EMBEDDED_OFFLINE_SESSIONS_MAX_COUNT, KC_CACHE_EMBEDDED_OFFLINE_CLIENT_SESSIONS_MAX_COUNT")
                .contains("about " + ((advice.heapBytesPerNode() >> 20) + 1) + " MiB of heap per node")
                .doesNotContain("max-sessions-per-node");
    }

    /**
     * What the advice promises: with the advised max-counts every node's share of random session ids, hashed onto the
     * segments as Infinispan does, fits below its headroom, for every cluster size.
     */
    @Test
    void theAdvisedMaxCountsHoldEveryNodesShare() {
        Random random = new Random(11);
        for (int members : new int[] {1, 2, 3, 5, 7, 12}) {
            for (int sessions : new int[] {1_000, 20_000, 200_000}) {
                int clientsPerSession = 1 + members % 3;
                long[] owned = new long[members];
                for (int i = 0; i < sessions; i++) {
                    UUID id = new UUID(random.nextLong(), random.nextLong());
                    owned[Math.floorMod(id.hashCode(), SEGMENTS) % members]++;
                }
                PreloadConfig config = config();
                CapacityAdvice advice = CapacityAdvice.of(new SessionCount(sessions, (long) sessions * clientsPerSession),
                        topology(members), 10_000, 10_000, config);
                for (long share : owned) {
                    assertThat(config.fillLimit(advice.sessionsMaxCount())).as("%d nodes, %d sessions", members, sessions)
                            .isGreaterThanOrEqualTo(share);
                    assertThat(config.cacheLimit(advice.clientSessionsMaxCount())).as("%d nodes, %d sessions", members, sessions)
                            .isGreaterThanOrEqualTo(share * clientsPerSession);
                }
                CapacityAdvice followed = CapacityAdvice.of(new SessionCount(sessions, (long) sessions * clientsPerSession),
                        topology(members), advice.sessionsMaxCount(), advice.clientSessionsMaxCount(), config);
                assertThat(followed.fits()).as("%d nodes, %d sessions, advice followed", members, sessions).isTrue();
            }
        }
    }

    @Test
    void noSessionsAlwaysFitAndNoRoomTakesNone() {
        assertThat(CapacityAdvice.of(new SessionCount(0, 0), topology(3), 10, 10, config()).fits()).isTrue();
        assertThat(CapacityAdvice.of(new SessionCount(10, 10), topology(3), 0, 0, config()).nodeCapacity()).isZero();
    }
}
