package dev.offlinepreload.plan;

import java.util.List;

/**
 * Sessions read and imported together. The ids are in the database's key order, so the batch can be read as the key
 * range {@code [first, last]} with one range scan per table ({@link #range()}); rows of that range that are not in
 * the batch (other nodes' sessions, sessions over capacity) are dropped before their DATA is parsed. Where the range
 * would hold many more rows than the batch, it is read by id instead.
 *
 * @param ids   the sessions to load, in key order (a hot batch: most recently refreshed first)
 * @param range read as the key range between the first and the last id rather than by id
 * @param hot   sessions refreshed within hot-window-seconds, loaded first and by id, whatever live requests do
 */
public record Batch(List<String> ids, boolean range, boolean hot) {

    public Batch {
        ids = List.copyOf(ids);
        if (ids.isEmpty()) {
            throw new IllegalArgumentException("empty batch");
        }
        if (range && hot) {
            throw new IllegalArgumentException("a hot batch is read by id");
        }
    }

    /** A batch of the long tail, in key order. */
    public Batch(List<String> ids, boolean range) {
        this(ids, range, false);
    }

    public String first() {
        return ids.get(0);
    }

    public String last() {
        return ids.get(ids.size() - 1);
    }

    public int size() {
        return ids.size();
    }
}
