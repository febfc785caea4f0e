package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class PlanningLogTest {

    private static final String START = "2026-11-25 21:00:01,250 DEBUG [dev.offlinepreload.PreloadCoordinator] "
            + "(offline-preload-coordinator) Offline session preload on node1: planning for cluster topology 4 (1 nodes)";
    private static final String PLANNED = "2026-11-25 21:00:13,750 INFO  [dev.offlinepreload.Preload] "
            + "(offline-preload-coordinator) Offline session preload on node1: loading 900000 sessions (10000000 in the "
            + "database, 10000000 owned by this node, 0 already cached, 9100000 over this node's limit of 900000) in 900 "
            + "batches (0 key ranges, 900 id lists); mode persistent, settings {preloading=true}";

    private static final List<String> LOG = List.of(
            "[9.0s][info][gc] GC(5) Pause Full (G1 Periodic Collection) 255M->61M(4096M) 140.0ms",
            START,
            "[20.1s][info][gc] GC(7) Pause Young (Normal) (G1 Evacuation Pause) 300M->120M(4096M) 5.0ms",
            "\"offline-preload-coordinator\" #80 daemon prio=5 os_prio=0 cpu=1.00ms elapsed=2.00s tid=0x1 nid=0x2 runnable",
            "[21.0s][info][gc] GC(8) Pause Full (Heap Inspection Initiated GC) 310M->190M(4096M) 240.5ms",
            " num     #instances         #bytes  class name (module)",
            "-------------------------------------------------------",
            "   1:       1900000       112000000  [B (java.base@17.0.19)",
            "   2:       1000000        24000000  java.lang.String (java.base@17.0.19)",
            "   3:        900000        21600000  dev.offlinepreload.plan.LoadPlanner$Ranked",
            "   4:        900000        21600000  dev.offlinepreload.plan.Candidate",
            "   5:            10            400  dev.offlinepreload.plan.Candidate",
            "Total       4700010       179200400",
            PLANNED,
            "[30.0s][info][gc] GC(9) Pause Full (Heap Inspection Initiated GC) 200M->100M(4096M) 200.0ms",
            "   1:       1000000        60000000  [B (java.base@17.0.19)",
            "Total       1000000        60000000");

    @Test
    void readsThePlanOfTheLoadsStartLine() {
        PlanningLog.Plan plan = PlanningLog.plan(PLANNED).orElseThrow();
        assertThat(plan.toLoad()).isEqualTo(900_000);
        assertThat(plan.seen()).isEqualTo(10_000_000);
        assertThat(plan.owned()).isEqualTo(10_000_000);
        assertThat(plan.overCapacity()).isEqualTo(9_100_000);
        assertThat(plan.limit()).isEqualTo(900_000);
        assertThat(plan.kept()).isEqualTo(900_000);
        assertThat(PlanningLog.plan(START)).isEmpty();
    }

    @Test
    void readsTheStartLineWithItsHotTierToo() {
        PlanningLog.Plan plan = PlanningLog.plan(PLANNED.replace("(10000000 in the", "(1200 recently refreshed first; 10000000 in the"))
                .orElseThrow();
        assertThat(plan.toLoad()).isEqualTo(900_000);
        assertThat(plan.seen()).isEqualTo(10_000_000);
        assertThat(plan.limit()).isEqualTo(900_000);
    }

    @Test
    void theWindowRunsFromTheDebugLineToTheLoadsStartLine() {
        PlanningLog.Window window = PlanningLog.window(LOG).orElseThrow();
        assertThat(window.from()).isEqualTo(1);
        assertThat(window.to()).isEqualTo(13);
        assertThat(window.seconds()).isEqualTo(12.5);
        assertThat(window.plan().kept()).isEqualTo(900_000);
        assertThat(PlanningLog.window(LOG.subList(0, 13))).isEmpty(); // still planning
        assertThat(PlanningLog.window(LOG.subList(2, LOG.size()))).isEmpty(); // no start line
    }

    @Test
    void readsHeapInspectionsAndTheirHistograms() {
        assertThat(PlanningLog.inspectionLiveBytes(LOG)).containsExactly(190L << 20, 100L << 20);
        assertThat(PlanningLog.histogramCount(LOG)).isEqualTo(2);
        List<PlanningLog.Histogram> histograms = PlanningLog.histograms(LOG);
        assertThat(histograms).hasSize(2);
        PlanningLog.Histogram first = histograms.get(0);
        assertThat(first.bytes()).isEqualTo(179_200_400L);
        assertThat(first.instances()).isEqualTo(4_700_010L);
        assertThat(first.row("dev.offlinepreload.plan.LoadPlanner$Ranked").instances()).isEqualTo(900_000);
        assertThat(first.row("[B").bytes()).isEqualTo(112_000_000L);
        // the same class from two class loaders counts once, summed
        assertThat(first.row("dev.offlinepreload.plan.Candidate")).isEqualTo(new PlanningLog.Row(900_010, 21_600_400));
        assertThat(histograms.get(1).row("java.lang.String").instances()).isZero();
        assertThat(histograms.get(1).rows()).containsOnlyKeys("[B");
    }

    @Test
    void theLiveHeapBeforePlanningIsTheLastPeriodicFullCollectionBeforeIt() {
        assertThat(PlanningLog.lastPeriodicLiveBefore(LOG, 1)).isEqualTo(61L << 20);
        assertThat(PlanningLog.lastPeriodicLiveBefore(LOG, 0)).isEqualTo(-1);
        assertThat(PlanningLog.lastPeriodicLiveBefore(LOG, LOG.size())).isEqualTo(61L << 20); // heap inspections do not count
    }
}
