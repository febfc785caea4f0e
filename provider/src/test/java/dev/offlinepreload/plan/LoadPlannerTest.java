package dev.offlinepreload.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

class LoadPlannerTest {

    /** Sessions s0..s(n-1); s(i) was last refreshed at time 1000 + i, so higher numbers are more recent. */
    private static Consumer<Consumer<Candidate>> sessions(int n) {
        return sink -> IntStream.range(0, n).forEach(i -> sink.accept(new Candidate("s" + i, 1000 + i)));
    }

    private static List<String> ids(LoadPlan plan) {
        return plan.batches().stream().flatMap(b -> b.ids().stream()).toList();
    }

    private static LoadPlanner planner(Predicate<String> owned, Predicate<String> cached, long limit) {
        return new LoadPlanner(owned, cached, limit, 1000);
    }

    @Test
    void loadsOnlyWhatThisNodeOwns() {
        LoadPlan plan = planner(id -> Integer.parseInt(id.substring(1)) % 3 == 0, id -> false, 100).plan(sessions(10));
        assertThat(ids(plan)).containsExactly("s0", "s3", "s6", "s9");
        assertThat(plan.seen()).isEqualTo(10);
        assertThat(plan.owned()).isEqualTo(4);
    }

    @Test
    void keepsTheDatabasesKeyOrderWhateverTheRecency() {
        // The database's collation decides the key order, not Java's: the plan keeps the stream's order.
        LoadPlan plan = planner(id -> true, id -> false, 100).plan(sink -> {
            sink.accept(new Candidate("b", 10));
            sink.accept(new Candidate("A", 30));
            sink.accept(new Candidate("c", 20));
        });
        assertThat(ids(plan)).containsExactly("b", "A", "c");
    }

    @Test
    void aLimitWorkedOutWhileTheKeysStreamIsAskedOnceTheyHaveAndKeepsTheMostRecent() {
        long[] limit = {-1};
        LoadPlanner planner = new LoadPlanner(id -> true, id -> false, 8, () -> limit[0], 1000);
        Consumer<Consumer<String>> keys = sink -> {
            IntStream.range(0, 6).forEach(i -> sink.accept("s" + i));
            limit[0] = 3; // the count finished meanwhile
        };
        LoadPlan plan = planner.plan(keys, sessions(6));
        assertThat(ids(plan)).containsExactly("s3", "s4", "s5");
        assertThat(plan.overCapacity()).isEqualTo(3);

        LoadPlanner roomy = new LoadPlanner(id -> true, id -> false, 8, () -> 8, 1000);
        assertThat(ids(roomy.plan(sink -> IntStream.range(0, 6).forEach(i -> sink.accept("s" + i)), sessions(6))))
                .as("all fit: the keys alone plan").containsExactly("s0", "s1", "s2", "s3", "s4", "s5");
    }

    @Test
    void keepsTheMostRecentWithinTheLimit() {
        LoadPlan plan = planner(id -> true, id -> false, 3).plan(sessions(10));
        assertThat(ids(plan)).containsExactly("s7", "s8", "s9");
        assertThat(plan.overCapacity()).isEqualTo(7);
    }

    @Test
    void doesNotReloadWhatIsCachedButCountsItAgainstTheLimit() {
        Set<String> cached = Set.of("s9", "s7");
        LoadPlan plan = planner(id -> true, cached::contains, 4).plan(sessions(10));
        // The four most recent are s9..s6; two of them are cached already.
        assertThat(ids(plan)).containsExactly("s6", "s8");
        assertThat(plan.alreadyCached()).isEqualTo(2);
    }

    @Test
    void zeroLimitLoadsNothing() {
        LoadPlan plan = planner(id -> true, id -> false, 0).plan(sessions(5));
        assertThat(plan.batches()).isEmpty();
        assertThat(plan.overCapacity()).isEqualTo(5);
    }

    @Test
    void equalTimestampsAreOrderedDeterministically() {
        LoadPlan plan = planner(id -> true, id -> false, 2).plan(sink -> {
            sink.accept(new Candidate("a", 5));
            sink.accept(new Candidate("c", 5));
            sink.accept(new Candidate("b", 5));
        });
        // Ties are broken by id: "b" and "c" are kept, then listed in stream order.
        assertThat(ids(plan)).as("key order as streamed").containsExactly("c", "b");
    }

    @Test
    void cutsTheKeptSessionsIntoBatchesInKeyOrder() {
        LoadPlan plan = new LoadPlanner(id -> true, id -> false, 100, 4).plan(sessions(10));
        assertThat(plan.batches()).extracting(Batch::ids).containsExactly(
                List.of("s0", "s1", "s2", "s3"), List.of("s4", "s5", "s6", "s7"), List.of("s8", "s9"));
        assertThat(plan.toLoad()).isEqualTo(10);
    }

    @Test
    void aDenseBatchIsReadAsAKeyRange() {
        // Three nodes: this one owns every third key, so a range holds three times the batch: still a range.
        LoadPlan plan = new LoadPlanner(id -> Integer.parseInt(id.substring(1)) % 3 == 0, id -> false, 1000, 10).plan(sessions(300));
        assertThat(plan.batches()).allSatisfy(b -> assertThat(b.range()).as("batch from %s", b.first()).isTrue());
    }

    @Test
    void aSparseBatchIsReadById() {
        // Capacity far below what the node owns: the 10 most recent of 1000 are spread over the whole key space.
        LoadPlan plan = new LoadPlanner(id -> true, id -> false, 10, 10).plan(sink -> IntStream.range(0, 1000)
                .forEach(i -> sink.accept(new Candidate(String.format("s%04d", i), i % 100 == 0 ? 5000 + i : i))));
        assertThat(plan.batches()).hasSize(1);
        assertThat(plan.batches().get(0).range()).isFalse();
        assertThat(plan.batches().get(0).ids()).hasSize(10).first().isEqualTo("s0000");
    }

    @Test
    void aSessionCachedWithoutSomeClientSessionsIsPlannedAgain() {
        // The store's cached predicate is "cached whole": a user session whose client sessions were dropped is not.
        Set<String> cachedWhole = Set.of("s1", "s3");
        LoadPlan plan = planner(id -> true, cachedWhole::contains, 100).plan(sessions(5));
        assertThat(ids(plan)).containsExactly("s0", "s2", "s4");
        assertThat(plan.alreadyCached()).isEqualTo(2);
    }

    @Test
    void whenTheLimitCoversWhatTheNodeOwnsTheKeysAloneMakeThePlan() {
        boolean[] recencyRead = {false};
        LoadPlan plan = new LoadPlanner(id -> !id.equals("s1"), id -> id.equals("s2"), 3, 10).plan(
                sink -> List.of("s0", "s1", "s2", "s3").forEach(sink), sink -> recencyRead[0] = true);
        assertThat(ids(plan)).containsExactly("s0", "s3");
        assertThat(plan.alreadyCached()).isEqualTo(1);
        assertThat(plan.owned()).isEqualTo(3);
        assertThat(recencyRead[0]).as("the recency stream was not needed").isFalse();
    }

    @Test
    void whenTheNodeOwnsMoreThanItsLimitTheMostRecentAreChosen() {
        LoadPlan plan = new LoadPlanner(id -> true, id -> false, 3, 10).plan(
                sink -> IntStream.range(0, 10).forEach(i -> sink.accept("s" + i)), sessions(10));
        assertThat(ids(plan)).containsExactly("s7", "s8", "s9");
        assertThat(plan.overCapacity()).isEqualTo(7);
    }

    @Test
    void theHotTierComesFirstMostRecentFirstByIdThenTheTailInKeyOrder() {
        LoadPlanner planner = new LoadPlanner(id -> !id.equals("s8"), id -> id.equals("s4"), 100, 2);
        LoadPlan plan = planner.plan(sink -> IntStream.range(0, 10).forEach(i -> sink.accept("s" + i)), sessions(10),
                sink -> {
                    sink.accept(new Candidate("s2", 90));
                    sink.accept(new Candidate("s8", 99)); // another node's
                    sink.accept(new Candidate("s4", 95)); // cached whole already
                    sink.accept(new Candidate("s7", 50));
                    sink.accept(new Candidate("s5", 70));
                });
        assertThat(ids(plan)).containsExactly("s2", "s5", "s7", "s0", "s1", "s3", "s6", "s9");
        assertThat(plan.hot()).isEqualTo(3);
        assertThat(plan.batches().subList(0, 2)).allSatisfy(b -> {
            assertThat(b.hot()).isTrue();
            assertThat(b.range()).isFalse();
        });
        assertThat(plan.batches().subList(2, plan.batches().size())).noneMatch(Batch::hot);
        assertThat(plan.alreadyCached()).isEqualTo(1);
    }

    @Test
    void theHotTierIsBoundedByTheCeilingKeepingTheMostRecent() {
        LoadPlanner planner = new LoadPlanner(id -> true, id -> false, 2, 10);
        LoadPlan plan = planner.plan(sink -> List.of("s0", "s1").forEach(sink), sessions(2), sink -> {
            sink.accept(new Candidate("s0", 10));
            sink.accept(new Candidate("x", 30)); // in the window, gone from the key stream since: not planned
            sink.accept(new Candidate("s1", 20));
        });
        assertThat(ids(plan)).containsExactly("s1", "s0");
        assertThat(plan.hot()).as("x took a place of the hot window but is no session to load").isEqualTo(1);
    }

    @Test
    void theHotTierAlonePlansFromTheRecentStreamOnlyMostRecentFirstWithinTheCeiling() {
        LoadPlanner planner = new LoadPlanner(id -> !id.equals("s8"), id -> id.equals("s4"), 3, 2);
        LoadPlan plan = planner.planHot(sink -> {
            sink.accept(new Candidate("s2", 90));
            sink.accept(new Candidate("s8", 99)); // another node's
            sink.accept(new Candidate("s4", 95)); // cached whole already
            sink.accept(new Candidate("s7", 50)); // over the ceiling of 3: the least recent owned one
            sink.accept(new Candidate("s5", 70));
        });
        assertThat(ids(plan)).containsExactly("s2", "s5");
        assertThat(plan.batches()).singleElement().satisfies(b -> {
            assertThat(b.hot()).isTrue();
            assertThat(b.range()).isFalse();
        });
        assertThat(plan.hot()).isEqualTo(2);
        assertThat(plan.seen()).as("refreshed within the window").isEqualTo(5);
        assertThat(plan.owned()).as("owned, within the ceiling").isEqualTo(3);
        assertThat(plan.alreadyCached()).isEqualTo(1);
        assertThat(plan.overCapacity()).isZero();
    }
}
