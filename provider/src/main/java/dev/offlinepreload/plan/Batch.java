package dev.offlinepreload.plan;

import java.util.List;

/**
 * Sessions read and imported together. The ids are in the database's key order, so the batch can be read as the key
 * range {@code [first, last]} with one range scan per table ({@link #range()}); rows of that range that are not in
 * the batch (other nodes' sessions, sessions over capacity) are dropped before their DATA is parsed. Where the range
 * would hold many more rows than the batch, it is read by id instead.
 *
 * @param ids   the sessions to load, in key order
 * @param range read as the key range between the first and the last id rather than by id
 */
public record Batch(List<String> ids, boolean range) {

    public Batch {
        ids = List.copyOf(ids);
        if (ids.isEmpty()) {
            throw new IllegalArgumentException("empty batch");
        }
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
