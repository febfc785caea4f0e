package dev.offlinepreload.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;

class PreloadConfigTest {

    private static PreloadConfig parse(Map<String, String> values) {
        return PreloadConfig.parse(values::get, 4);
    }

    @Test
    void defaultsApplyWhenNothingIsSet() {
        assertThat(parse(Map.of()).preloading()).isEqualTo(Preloading.AUTO);
    }

    @Test
    void readsChoicesCaseInsensitively() {
        assertThat(parse(Map.of("preloading", "FALSE")).preloading()).isEqualTo(Preloading.FALSE);
        assertThat(parse(Map.of("preloading", " true ")).preloading()).isEqualTo(Preloading.TRUE);
        assertThat(parse(Map.of("preloading", "Auto")).preloading()).isEqualTo(Preloading.AUTO);
        assertThat(parse(Map.of("adaptive-load", "FALSE")).adaptiveLoad()).isFalse();
    }

    @Test
    void blankValueMeansDefault() {
        assertThat(parse(Map.of("preloading", "  ")).preloading()).isEqualTo(Preloading.AUTO);
    }

    @Test
    void rejectsATypoInsteadOfReadingItAsFalse() {
        assertThatThrownBy(() -> parse(Map.of("preloading", "ture")))
                .isInstanceOf(InvalidOptionException.class)
                .hasMessageContaining("spi-user-sessions--offline-preload--preloading")
                .hasMessageContaining("'ture'")
                .hasMessageContaining("auto, true or false");
        assertThatThrownBy(() -> parse(Map.of("adaptive-load", "ture")))
                .isInstanceOf(InvalidOptionException.class)
                .hasMessageContaining("true or false");
    }

    @Test
    void byDefaultOnlyANodeWithVolatileSessionsPreloads() {
        assertThat(Preloading.AUTO.preloads(false)).as("volatile").isTrue();
        assertThat(Preloading.AUTO.preloads(true)).as("persistent").isFalse();
        assertThat(Preloading.TRUE.preloads(true)).isTrue();
        assertThat(Preloading.TRUE.preloads(false)).isTrue();
        assertThat(Preloading.FALSE.preloads(true)).isFalse();
        assertThat(Preloading.FALSE.preloads(false)).isFalse();
    }

    @Test
    void describesEffectiveValuesByOptionName() {
        assertThat(parse(Map.of("preloading", "false")).describe()).containsEntry("preloading", "false");
        assertThat(parse(Map.of()).describe()).containsEntry("preloading", "auto");
    }

    @Test
    void defaultsForEveryOption() {
        PreloadConfig config = parse(Map.of());
        assertThat(config.batchSize()).isEqualTo(1000);
        assertThat(config.workers()).as("twice the CPUs given to parse").isEqualTo(8);
        assertThat(config.participatingNodes()).as("all").isEmpty();
        assertThat(config.headroomPercent()).isEqualTo(10);
        assertThat(config.databaseRetry()).hasSeconds(120);
        assertThat(config.databaseTimeout()).hasSeconds(60);
        assertThat(config.expectedClusterSize()).isEqualTo(1);
        assertThat(config.joinTimeout()).hasSeconds(300);
        assertThat(config.revocationRecheck()).hasSeconds(30);
        assertThat(config.quietStart()).as("room for a late load balancer").hasSeconds(30);
        assertThat(config.steadyTrafficPercent()).as("only on a quiet node: a share raised p99 under traffic").isZero();
        assertThat(config.holdReadiness()).as("the hot tier, with volatile sessions").isEqualTo(ReadinessHold.AUTO);
        assertThat(config.buildIndexesOnline()).isTrue();
    }

    @Test
    void holdReadinessKeepsItsTrueAndFalseAndRefusesATypo() {
        assertThat(parse(Map.of("hold-readiness", "true")).holdReadiness()).isEqualTo(ReadinessHold.TRUE);
        assertThat(parse(Map.of("hold-readiness", "False")).holdReadiness()).isEqualTo(ReadinessHold.FALSE);
        assertThat(parse(Map.of()).describe()).containsEntry("hold-readiness", "auto");
        assertThatThrownBy(() -> parse(Map.of("hold-readiness", "yes")))
                .hasMessageContaining("spi-user-sessions--offline-preload--hold-readiness")
                .hasMessageContaining("auto, true or false");
    }

    @Test
    void aStatementTimeoutOfZeroWouldMeanNoneAndIsRefused() {
        assertThat(parse(Map.of("database-timeout-seconds", "5")).databaseTimeout()).hasSeconds(5);
        assertThatThrownBy(() -> parse(Map.of("database-timeout-seconds", "0")))
                .hasMessageContaining("spi-user-sessions--offline-preload--database-timeout-seconds");
    }

    @Test
    void theOnlineIndexBuildCanBeSwitchedOffButNotByATypo() {
        assertThat(parse(Map.of("build-indexes-online", "false")).buildIndexesOnline()).isFalse();
        assertThatThrownBy(() -> parse(Map.of("build-indexes-online", "no")))
                .hasMessageContaining("spi-user-sessions--offline-preload--build-indexes-online")
                .hasMessageContaining("'no'");
        assertThat(PreloadConfig.DISABLED.buildIndexesOnline()).as("an invalid configuration changes no schema").isFalse();
    }

    @Test
    void rejectsNumbersOutOfRangeOrNotNumbers() {
        assertThatThrownBy(() -> parse(Map.of("batch-size", "0")))
                .hasMessageContaining("spi-user-sessions--offline-preload--batch-size")
                .hasMessageContaining("from 1 to 100000");
        assertThatThrownBy(() -> parse(Map.of("workers-per-node", "many")))
                .hasMessageContaining("'many'").hasMessageContaining("workers-per-node");
        assertThatThrownBy(() -> parse(Map.of("capacity-headroom-percent", "95"))).hasMessageContaining("from 0 to 90");
        assertThatThrownBy(() -> parse(Map.of("revocation-recheck-seconds", "0"))).as("the delayed check cannot be switched off")
                .hasMessageContaining("revocation-recheck-seconds").hasMessageContaining("from 1 to 3600");
        assertThat(parse(Map.of("quiet-start-seconds", "0")).quietStart()).as("a restart without traffic").isZero();
        assertThatThrownBy(() -> parse(Map.of("quiet-start-seconds", "-1")))
                .hasMessageContaining("quiet-start-seconds").hasMessageContaining("from 0 to 3600");
        assertThat(parse(Map.of("steady-traffic-percent", "25")).steadyTrafficPercent()).isEqualTo(25);
        assertThatThrownBy(() -> parse(Map.of("steady-traffic-percent", "101")))
                .hasMessageContaining("steady-traffic-percent").hasMessageContaining("from 0 to 100");
    }

    @Test
    void readsNodeLists() {
        assertThat(parse(Map.of("participating-nodes", " node1, node2 ,")).participatingNodes())
                .containsExactlyInAnyOrder("node1", "node2");
        assertThat(parse(Map.of("participating-nodes", "node1")).participates("node2")).isFalse();
        assertThat(parse(Map.of()).participates("any")).isTrue();
        assertThatThrownBy(() -> parse(Map.of("participating-nodes", ",")))
                .hasMessageContaining("comma-separated list of node names");
    }

    @Test
    void fillLimitLeavesHeadroomAndHonoursThePerNodeMaximum() {
        assertThat(parse(Map.of()).fillLimit(10_000)).isEqualTo(9_000);
        assertThat(parse(Map.of("capacity-headroom-percent", "0")).fillLimit(10_000)).isEqualTo(10_000);
        assertThat(parse(Map.of("max-sessions-per-node", "500")).fillLimit(10_000)).isEqualTo(500);
        assertThat(parse(Map.of()).fillLimit(-1)).as("unbounded cache").isEqualTo(Long.MAX_VALUE);
        assertThat(parse(Map.of("max-sessions-per-node", "500")).cacheLimit(10_000)).as("client sessions")
                .isEqualTo(9_000);
    }

    @Test
    void noOptionNameLooksLikeABuildTimeOptionToKeycloak() {
        // Keycloak's PropertyMappers.isSpiBuildTimeProperty (non-strict): such options are fixed at build time.
        for (PreloadOption option : PreloadOption.values()) {
            assertThat(option.key()).doesNotEndWith("-enabled").doesNotEndWith("-provider").doesNotEndWith("-provider-default")
                    .isNotEqualTo("enabled").isNotEqualTo("provider");
        }
    }
}
