package dev.offlinepreload.plan;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Decides which sessions this node loads: among all candidates, those whose key it owns in the current topology,
 * the {@code limit} most recently refreshed of them, minus those already cached. Memory stays bounded by the limit,
 * however many sessions the database holds: a min-heap keeps only the most recent {@code limit} owned candidates.
 */
public final class LoadPlanner {

    private static final Comparator<Candidate> OLDEST_FIRST =
            Comparator.comparingInt(Candidate::lastRefresh).thenComparing(Candidate::id);

    private final Predicate<String> owned;
    private final Predicate<String> cached;
    private final long limit;

    /**
     * @param owned  whether this node is the primary owner of a session id in the topology being planned for
     * @param cached whether this node's cache already holds a session id
     * @param limit  most sessions this node keeps cached (its share of the capacity)
     */
    public LoadPlanner(Predicate<String> owned, Predicate<String> cached, long limit) {
        this.owned = owned;
        this.cached = cached;
        this.limit = limit;
    }

    /** @param source calls its consumer once per candidate (a database stream, in production) */
    public LoadPlan plan(Consumer<Consumer<Candidate>> source) {
        PriorityQueue<Candidate> mostRecent = new PriorityQueue<>(OLDEST_FIRST);
        long[] seen = {0};
        long[] ownedCount = {0};
        source.accept(candidate -> {
            seen[0]++;
            if (!owned.test(candidate.id())) {
                return;
            }
            ownedCount[0]++;
            if (limit <= 0) {
                return;
            }
            if (mostRecent.size() < limit) {
                mostRecent.add(candidate);
            } else if (OLDEST_FIRST.compare(candidate, mostRecent.peek()) > 0) {
                mostRecent.poll();
                mostRecent.add(candidate);
            }
        });

        List<Candidate> kept = new ArrayList<>(mostRecent);
        kept.sort(OLDEST_FIRST.reversed());
        List<Candidate> toLoad = new ArrayList<>(kept.size());
        long alreadyCached = 0;
        for (Candidate candidate : kept) {
            if (cached.test(candidate.id())) {
                alreadyCached++;
            } else {
                toLoad.add(candidate);
            }
        }
        return new LoadPlan(List.copyOf(toLoad), seen[0], ownedCount[0], alreadyCached,
                ownedCount[0] - kept.size(), limit);
    }
}
