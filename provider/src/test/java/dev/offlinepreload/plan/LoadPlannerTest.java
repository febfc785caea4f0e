package dev.offlinepreload.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

class LoadPlannerTest {

    /** Sessions s0..s(n-1); s(i) was last refreshed at time 1000 + i, so higher numbers are more recent. */
    private static Consumer<Consumer<Candidate>> sessions(int n) {
        return sink -> IntStream.range(0, n).forEach(i -> sink.accept(new Candidate("s" + i, 1000 + i)));
    }

    private static List<String> ids(LoadPlan plan) {
        return plan.toLoad().stream().map(Candidate::id).toList();
    }

    @Test
    void loadsOnlyWhatThisNodeOwns() {
        LoadPlan plan = new LoadPlanner(id -> Integer.parseInt(id.substring(1)) % 3 == 0, id -> false, 100).plan(sessions(10));
        assertThat(ids(plan)).containsExactly("s9", "s6", "s3", "s0");
        assertThat(plan.seen()).isEqualTo(10);
        assertThat(plan.owned()).isEqualTo(4);
    }

    @Test
    void mostRecentlyRefreshedFirst() {
        LoadPlan plan = new LoadPlanner(id -> true, id -> false, 100).plan(sink -> {
            sink.accept(new Candidate("old", 10));
            sink.accept(new Candidate("newest", 30));
            sink.accept(new Candidate("middle", 20));
        });
        assertThat(ids(plan)).containsExactly("newest", "middle", "old");
    }

    @Test
    void keepsTheMostRecentWithinTheLimit() {
        LoadPlan plan = new LoadPlanner(id -> true, id -> false, 3).plan(sessions(10));
        assertThat(ids(plan)).containsExactly("s9", "s8", "s7");
        assertThat(plan.overCapacity()).isEqualTo(7);
    }

    @Test
    void doesNotReloadWhatIsCachedButCountsItAgainstTheLimit() {
        Set<String> cached = Set.of("s9", "s7");
        LoadPlan plan = new LoadPlanner(id -> true, cached::contains, 4).plan(sessions(10));
        // The four most recent are s9..s6; two of them are cached already.
        assertThat(ids(plan)).containsExactly("s8", "s6");
        assertThat(plan.alreadyCached()).isEqualTo(2);
    }

    @Test
    void zeroLimitLoadsNothing() {
        LoadPlan plan = new LoadPlanner(id -> true, id -> false, 0).plan(sessions(5));
        assertThat(plan.toLoad()).isEmpty();
        assertThat(plan.overCapacity()).isEqualTo(5);
    }

    @Test
    void equalTimestampsAreOrderedDeterministically() {
        LoadPlan plan = new LoadPlanner(id -> true, id -> false, 2).plan(sink -> {
            sink.accept(new Candidate("a", 5));
            sink.accept(new Candidate("c", 5));
            sink.accept(new Candidate("b", 5));
        });
        assertThat(ids(plan)).containsExactly("c", "b");
    }
}
