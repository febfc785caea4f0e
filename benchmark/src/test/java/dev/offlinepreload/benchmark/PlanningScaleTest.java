package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class PlanningScaleTest {

    @Test
    void readsTheExecutionTimeOfAnExplainAnalyze() {
        assertThat(PlanningScale.serverSeconds(List.of(
                "Index Only Scan using constraint_offl_us_ses_pk2 on offline_user_session  (actual rows=10000000 loops=1)",
                "  Heap Fetches: 0",
                "Planning Time: 0.081 ms",
                "Execution Time: 2345.500 ms"))).isEqualTo(2.3455);
        assertThat(PlanningScale.serverSeconds(List.of("Seq Scan on offline_user_session"))).isEqualTo(-1);
    }

    @Test
    void labelsSizes() {
        assertThat(PlanningScale.label(10_000_000)).isEqualTo("10M");
        assertThat(PlanningScale.label(250_000)).isEqualTo("250k");
        assertThat(PlanningScale.label(1234)).isEqualTo("1234");
    }

    @Test
    void theTableHasOneColumnPerSizeAndBytesPerKeptSession() {
        long baseline = 60L << 20;
        PlanningLog.Plan plan = new PlanningLog.Plan(900_000, 10_000_000, 10_000_000, 0, 9_100_000, 900_000);
        PlanningLog.Histogram histogram = new PlanningLog.Histogram(Map.of(
                "dev.offlinepreload.plan.LoadPlanner$Ranked", new PlanningLog.Row(900_000, 21_600_000)), 1, 1);
        PlanningScale.Result result = new PlanningScale.Result(10_000_000, baseline, baseline, null, plan, 42.25, 3.1, 1, 20.4, 1, 2.5,
                400L << 20, 12, baseline + 90_000_000L, 50, 30, baseline + 126_000_000L, histogram, baseline + 80_000_000L,
                6.04, 2.3, "", "");
        List<String> table = PlanningScale.table(List.of(result));
        assertThat(table.get(0)).isEqualTo("| | 10M sessions |");
        assertThat(table.get(1)).isEqualTo("|---|---|");
        assertThat(table).contains(
                "| sessions kept by the node (owned within its limit) | 900,000 |",
                "| planning time (DEBUG line to the load's start line) | 42.3 s |",
                "|   of which PostgreSQL: keys() / candidates() / counts (execution time) | 3.1 / 20.4 / 2.5 s |",
                "| live heap before planning, node idle and warmed up (periodic full GC) | 60 MiB |",
                "| live heap after planning, the plan held (over the live heap before) | 145 MiB (+85 MiB) |",
                "|   per session kept | 100 bytes (95 MiB per 1M kept) |",
                "|   largest live heap sampled during planning (over the live heap before) | 180 MiB (+120 MiB, 30 samples) |",
                "|   per session kept | 140 bytes (134 MiB per 1M kept) |",
                "|   per session kept | 89 bytes (85 MiB per 1M kept) |",
                "|   planner's objects at that sample: Ranked, Candidate | 900,000, 0 |",
                "| full key scan, JDBC stream like the provider's (best of 3) | 6.0 s |");
    }

    @Test
    void thePlannersBytesAreItsRecordsAndWhatStringsAndArraysGrewBy() {
        PlanningLog.Histogram off = new PlanningLog.Histogram(Map.of("java.lang.String", new PlanningLog.Row(10, 240),
                "[B", new PlanningLog.Row(10, 1000), "[Ljava.lang.Object;", new PlanningLog.Row(1, 100)), 21, 1340);
        PlanningLog.Histogram planning = new PlanningLog.Histogram(Map.of(
                "dev.offlinepreload.plan.LoadPlanner$Ranked", new PlanningLog.Row(100, 2400),
                "dev.offlinepreload.plan.Candidate", new PlanningLog.Row(100, 2400),
                "java.lang.String", new PlanningLog.Row(110, 2640), "[B", new PlanningLog.Row(110, 6600),
                "[Ljava.lang.Object;", new PlanningLog.Row(2, 600)), 422, 14640);
        assertThat(PlanningScale.plannerBytes(planning, off)).isEqualTo(2400 + 2400 + 2400 + 5600 + 500);
        assertThat(PlanningScale.plannerBytes(planning, null)).isEqualTo(-1);
    }
}
