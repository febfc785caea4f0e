package dev.offlinepreload.plan;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Decides which sessions this node loads, and in which batches: among all candidates (streamed in the database's key
 * order), those whose key it owns in the current topology, the {@code limit} most recently refreshed of them, minus
 * those its caches already hold whole. Memory stays bounded by the limit, however many sessions the database holds:
 * a min-heap keeps only the most recent {@code limit} owned candidates.
 * <p>
 * The kept sessions are cut, in key order, into batches of {@code batchSize}. A batch is read as a key range when
 * the range holds at most {@link #RANGE_SPREAD} times as many candidates as the batch (the usual case: one node, or
 * a few nodes whose capacity covers what they own), otherwise by id (many nodes, or capacity far below what the
 * node owns), so a range never reads many rows only to drop them.
 */
public final class LoadPlanner {

    /** A range may hold this many candidates per session of the batch; more, and the batch is read by id. */
    public static final int RANGE_SPREAD = 4;

    /** A candidate and its position in the key-ordered stream. */
    private record Ranked(Candidate candidate, long position) {
    }

    private static final Comparator<Ranked> OLDEST_FIRST = Comparator.comparingInt((Ranked r) -> r.candidate().lastRefresh())
            .thenComparing(r -> r.candidate().id());

    private final Predicate<String> owned;
    private final Predicate<String> cached;
    private final long ceiling;
    private final LongSupplier limit;
    private final int batchSize;

    /**
     * @param owned     whether this node is the primary owner of a session id in the topology being planned for
     * @param cached    whether this node's caches already hold a session and all its client sessions
     * @param limit     most sessions this node keeps cached (its share of the capacity)
     * @param batchSize sessions per batch
     */
    public LoadPlanner(Predicate<String> owned, Predicate<String> cached, long limit, int batchSize) {
        this(owned, cached, limit, () -> limit, batchSize);
    }

    /**
     * For a limit that is still being worked out while the keys stream (the capacity count runs meanwhile).
     *
     * @param ceiling the most the limit can turn out to be: what the keys stream may collect
     * @param limit   asked once the keys have streamed; at most {@code ceiling}
     */
    public LoadPlanner(Predicate<String> owned, Predicate<String> cached, long ceiling, LongSupplier limit, int batchSize) {
        this.owned = owned;
        this.cached = cached;
        this.ceiling = ceiling;
        this.limit = limit;
        this.batchSize = batchSize;
    }

    /**
     * Plans in one cheap pass when the node's limit covers every session it owns (the usual case once an operator
     * sizes the caches): the keys alone, in key order, are enough then. Only when the node owns more sessions than it
     * may keep does it read the candidates with their last refresh, to keep the most recent.
     *
     * @param keys       calls its consumer once per offline session id, in the database's key order
     * @param candidates calls its consumer once per non-expired candidate with its last refresh, in key order
     */
    public LoadPlan plan(Consumer<Consumer<String>> keys, Consumer<Consumer<Candidate>> candidates) {
        List<Ranked> owned = new ArrayList<>();
        long[] seen = {0};
        boolean[] overCeiling = {false};
        keys.accept(id -> {
            long position = seen[0]++;
            if (!overCeiling[0] && this.owned.test(id)) {
                if (owned.size() < ceiling) {
                    owned.add(new Ranked(new Candidate(id, 0), position));
                } else {
                    overCeiling[0] = true;
                    owned.clear(); // the recency pass below decides
                }
            }
        });
        long limit = this.limit.getAsLong();
        return overCeiling[0] || owned.size() > limit ? plan(candidates, limit) : plan(owned, seen[0], owned.size(), 0, limit);
    }

    /** @param source calls its consumer once per candidate, in the database's key order (a database stream) */
    public LoadPlan plan(Consumer<Consumer<Candidate>> source) {
        return plan(source, limit.getAsLong());
    }

    private LoadPlan plan(Consumer<Consumer<Candidate>> source, long limit) {
        PriorityQueue<Ranked> mostRecent = new PriorityQueue<>(OLDEST_FIRST);
        long[] seen = {0};
        long[] ownedCount = {0};
        source.accept(candidate -> {
            long position = seen[0]++;
            if (!owned.test(candidate.id())) {
                return;
            }
            ownedCount[0]++;
            if (limit <= 0) {
                return;
            }
            Ranked ranked = new Ranked(candidate, position);
            if (mostRecent.size() < limit) {
                mostRecent.add(ranked);
            } else if (OLDEST_FIRST.compare(ranked, mostRecent.peek()) > 0) {
                mostRecent.poll();
                mostRecent.add(ranked);
            }
        });
        List<Ranked> kept = new ArrayList<>(mostRecent);
        kept.sort(Comparator.comparingLong(Ranked::position));
        return plan(kept, seen[0], ownedCount[0], ownedCount[0] - kept.size(), limit);
    }

    /** @param kept the owned sessions within the limit, in key order */
    private LoadPlan plan(List<Ranked> kept, long seen, long ownedCount, long overCapacity, long limit) {
        List<Ranked> toLoad = new ArrayList<>(kept.size());
        long alreadyCached = 0;
        for (Ranked r : kept) {
            if (cached.test(r.candidate().id())) {
                alreadyCached++;
            } else {
                toLoad.add(r);
            }
        }
        return new LoadPlan(batches(toLoad), seen, ownedCount, alreadyCached, overCapacity, limit);
    }

    private List<Batch> batches(List<Ranked> toLoad) {
        List<Batch> batches = new ArrayList<>(toLoad.size() / batchSize + 1);
        for (int from = 0; from < toLoad.size(); from += batchSize) {
            List<Ranked> slice = toLoad.subList(from, Math.min(toLoad.size(), from + batchSize));
            long spread = slice.get(slice.size() - 1).position() - slice.get(0).position() + 1;
            batches.add(new Batch(slice.stream().map(r -> r.candidate().id()).toList(),
                    spread <= (long) RANGE_SPREAD * slice.size()));
        }
        return batches;
    }
}
