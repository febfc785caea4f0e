package dev.offlinepreload.plan;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 * What traffic needs first is loaded first: the kept sessions refreshed most recently (the hot tier, streamed by
 * {@code recent}) come first, by id, most recent first; they are the likeliest to be refreshed again soon.
 * The rest (the long tail) is cut, in key order, into batches of {@code batchSize}. A batch is read as a key range when
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

    private static final Comparator<Candidate> OLDER_FIRST = Comparator.comparingInt(Candidate::lastRefresh)
            .thenComparing(Candidate::id);
    private static final Comparator<Ranked> OLDEST_FIRST = Comparator.comparing(Ranked::candidate, OLDER_FIRST);

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
     * For a limit worked out only once the keys have streamed (the capacity count, which runs when it is asked for).
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
        return plan(keys, candidates, none -> { });
    }

    /**
     * {@link #plan(Consumer, Consumer)}, with a hot tier loaded first.
     *
     * @param recent calls its consumer once per session refreshed within the hot window (any order); of those this
     *               node owns, at most the ceiling's most recent are kept
     */
    public LoadPlan plan(Consumer<Consumer<String>> keys, Consumer<Consumer<Candidate>> candidates,
                         Consumer<Consumer<Candidate>> recent) {
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
        Map<String, Integer> hot = hot(recent);
        long limit = this.limit.getAsLong();
        return overCeiling[0] || owned.size() > limit ? plan(candidates, limit, hot)
                : plan(owned, seen[0], owned.size(), 0, limit, hot);
    }

    /**
     * The hot tier alone, from its own indexed query: no key scan and no count, so its cost follows the hot tier, not
     * the database. Of the sessions refreshed within the hot window, those this node owns, at most the ceiling's most
     * recent, minus those its caches hold whole; most recent first. Where sessions are volatile this runs while
     * requests are at work ({@code LoadPlan#seen} and {@code owned} count the hot window only); the rest is planned
     * later by {@link #plan(Consumer, Consumer, Consumer)}, where the sessions loaded here count as already cached.
     *
     * @param recent calls its consumer once per session refreshed within the hot window (any order)
     */
    public LoadPlan planHot(Consumer<Consumer<Candidate>> recent) {
        long[] seen = {0};
        Map<String, Integer> hot = hot(sink -> recent.accept(candidate -> {
            seen[0]++;
            sink.accept(candidate);
        }));
        List<Candidate> toLoad = new ArrayList<>(hot.size());
        hot.forEach((id, lastRefresh) -> {
            if (!cached.test(id)) {
                toLoad.add(new Candidate(id, lastRefresh));
            }
        });
        return new LoadPlan(hotBatches(toLoad), seen[0], hot.size(), hot.size() - toLoad.size(), 0, ceiling,
                toLoad.size());
    }

    /** @param source calls its consumer once per candidate, in the database's key order (a database stream) */
    public LoadPlan plan(Consumer<Consumer<Candidate>> source) {
        return plan(source, limit.getAsLong(), Map.of());
    }

    /** The owned sessions of the hot window, at most the ceiling's most recent: their last refresh by id. */
    private Map<String, Integer> hot(Consumer<Consumer<Candidate>> recent) {
        PriorityQueue<Candidate> mostRecent = new PriorityQueue<>(OLDER_FIRST);
        recent.accept(candidate -> {
            if (ceiling <= 0 || !owned.test(candidate.id())) {
                return;
            }
            if (mostRecent.size() < ceiling) {
                mostRecent.add(candidate);
            } else if (OLDER_FIRST.compare(candidate, mostRecent.peek()) > 0) {
                mostRecent.poll();
                mostRecent.add(candidate);
            }
        });
        Map<String, Integer> hot = new HashMap<>(mostRecent.size() * 4 / 3 + 1);
        mostRecent.forEach(c -> hot.put(c.id(), c.lastRefresh()));
        return hot;
    }

    private LoadPlan plan(Consumer<Consumer<Candidate>> source, long limit, Map<String, Integer> hot) {
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
        return plan(kept, seen[0], ownedCount[0], ownedCount[0] - kept.size(), limit, hot);
    }

    /** @param kept the owned sessions within the limit, in key order */
    private LoadPlan plan(List<Ranked> kept, long seen, long ownedCount, long overCapacity, long limit,
                          Map<String, Integer> hot) {
        List<Candidate> hotToLoad = new ArrayList<>();
        List<Ranked> tail = new ArrayList<>(kept.size());
        long alreadyCached = 0;
        for (Ranked r : kept) {
            String id = r.candidate().id();
            if (cached.test(id)) {
                alreadyCached++;
            } else if (hot.containsKey(id)) {
                hotToLoad.add(new Candidate(id, hot.get(id)));
            } else {
                tail.add(r);
            }
        }
        List<Batch> batches = new ArrayList<>(kept.size() / batchSize + 2);
        batches.addAll(hotBatches(hotToLoad));
        batches.addAll(batches(tail));
        return new LoadPlan(batches, seen, ownedCount, alreadyCached, overCapacity, limit, hotToLoad.size());
    }

    /** Hot batches, read by id, the most recently refreshed first (sorts {@code hot}). */
    private List<Batch> hotBatches(List<Candidate> hot) {
        hot.sort(OLDER_FIRST.reversed());
        List<Batch> batches = new ArrayList<>(hot.size() / batchSize + 1);
        for (int from = 0; from < hot.size(); from += batchSize) {
            batches.add(new Batch(hot.subList(from, Math.min(hot.size(), from + batchSize)).stream()
                    .map(Candidate::id).toList(), false, true));
        }
        return batches;
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
