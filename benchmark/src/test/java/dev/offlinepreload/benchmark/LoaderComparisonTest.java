package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class LoaderComparisonTest {

    private static final String STARTED = "2026-11-28 07:51:02,100 INFO  [io.quarkus] (main) Keycloak 26.7.4 on JVM "
            + "(powered by Quarkus 3.27.1) started in 14.412s. Listening on: http://0.0.0.0:8080";
    private static final String QUIET_START = "2026-11-28 07:51:01,900 INFO  [dev.offlinepreload.PreloadCoordinator] "
            + "(offline-preload-coordinator) Offline session preload on node1 starts once the node has had no request for "
            + "10 s (persistent sessions, adaptive-load)";
    private static final String FINISHED = "2026-11-28 07:51:53,800 INFO  [dev.offlinepreload.Preload] "
            + "(offline-preload-coordinator) Offline session preload on node1 finished in 36.6 s: 1000000 loaded "
            + "(1000000 client sessions, 27291 sessions/s), 0 already cached (0 of them completed), 0 expired";

    @Test
    void theLoadIsTimedFromKeycloaksStartedLineSoTheQuietStartCounts() {
        assertThat(LoaderComparison.fromReadySeconds(List.of(QUIET_START, STARTED, FINISHED))).isEqualTo(51.7);
    }

    @Test
    void withoutAStartedLineOrAnEndThereIsNoFigure() {
        assertThat(LoaderComparison.fromReadySeconds(List.of(QUIET_START, FINISHED))).isEqualTo(-1);
        assertThat(LoaderComparison.fromReadySeconds(List.of(QUIET_START, STARTED))).isEqualTo(-1);
    }
}
