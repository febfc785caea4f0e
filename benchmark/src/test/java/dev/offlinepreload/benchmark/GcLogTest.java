package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

class GcLogTest {

    private static final List<String> LOG = List.of(
            "[1.2s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(256M) 3.1ms",
            "2026-11-21 16:00:00,000 INFO  [x] Offline session preload on node1: loading 10 sessions",
            "[2.0s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 512M->300M(1024M) 10.5ms",
            "[2.5s][info][gc] GC(2) Pause Young (Concurrent Start) (G1 Humongous Allocation) 1G->400M(2G) 4.5ms",
            "[2.6s][info][gc] GC(2) Pause Remark 420M->410M(2G) 1.0ms",
            "[2.7s][info][gc] GC(2) Concurrent Mark Cycle 120.3ms",
            "2026-11-21 16:00:05,000 INFO  [x] Offline session preload on node1 finished in 5.0 s",
            "[6.0s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 600M->350M(2G) 9.0ms",
            "[9.0s][info][gc] GC(4) Pause Full (G1 Periodic Collection) 360M->250M(2G) 150.2ms",
            "[12.0s][info][gc] GC(5) Pause Full (G1 Periodic Collection) 255M->249M(2G) 140.0ms");

    @Test
    void parsesPausesInEveryUnit() {
        GcLog.Pause pause = GcLog.parse(LOG.get(3)).orElseThrow();
        assertThat(pause.kind()).isEqualTo("Pause Young");
        assertThat(pause.beforeBytes()).isEqualTo(1L << 30);
        assertThat(pause.afterBytes()).isEqualTo(400L << 20);
        assertThat(pause.millis()).isEqualTo(4.5);
        assertThat(GcLog.parse("[1s][info][gc] GC(9) Pause Young (Normal) (G1 Evacuation Pause) 900K->100K(4M) 0.2ms"))
                .get().extracting(GcLog.Pause::afterBytes).isEqualTo(100L << 10);
        assertThat(GcLog.parse("[3.4s][info][gc] GC(4) Pause Young (Allocation Failure) 1047M->341M(3925M) 98.7ms"))
                .get().extracting(GcLog.Pause::afterBytes).isEqualTo(341L << 20); // ParallelGC
        assertThat(GcLog.parse(LOG.get(5))).isEmpty();
        assertThat(GcLog.parse(LOG.get(8)).orElseThrow().periodicFull()).isTrue();
        assertThat(GcLog.parse(LOG.get(7)).orElseThrow().periodicFull()).isFalse();
    }

    @Test
    void windowTakesThePeakAfterCollectionAndTheFirstPeriodicFullGcAfterIt() {
        GcLog.Window window = GcLog.window(LOG, l -> l.contains("loading"), l -> l.contains("finished in"));
        assertThat(window.peakAfterGcBytes()).isEqualTo(410L << 20);
        assertThat(window.pauses()).isEqualTo(3);
        assertThat(window.pauseMillis()).isEqualTo(16.0);
        assertThat(window.liveAfterBytes()).isEqualTo(250L << 20);
    }

    @Test
    void aMissingWindowIsAnError() {
        assertThatThrownBy(() -> GcLog.window(LOG, l -> l.contains("nope"), l -> true))
                .hasMessageContaining("load window not found");
    }
}
