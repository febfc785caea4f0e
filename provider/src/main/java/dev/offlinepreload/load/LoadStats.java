package dev.offlinepreload.load;

import java.util.concurrent.atomic.LongAdder;

/** Counters of one load pass; a pass's counters also add up into the node's lifetime counters (the metrics). */
public final class LoadStats {

    private final LoadStats total;
    final LongAdder loaded = new LongAdder();
    final LongAdder clientSessions = new LongAdder();
    final LongAdder alreadyCached = new LongAdder();
    final LongAdder repaired = new LongAdder();
    final LongAdder expired = new LongAdder();
    final LongAdder gone = new LongAdder();
    final LongAdder skipped = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder revokedRemoved = new LongAdder();

    /** @param total the lifetime counters this pass adds into, or null for the lifetime counters themselves */
    public LoadStats(LoadStats total) {
        this.total = total;
    }

    void add(BatchResult result) {
        loaded.add(result.loaded());
        clientSessions.add(result.clientSessions());
        alreadyCached.add(result.alreadyCached());
        repaired.add(result.repaired());
        expired.add(result.expired());
        gone.add(result.gone());
        skipped.add(result.skipped().size());
        if (total != null) {
            total.add(result);
        }
    }

    void addFailed(long sessions) {
        failed.add(sessions);
        if (total != null) {
            total.addFailed(sessions);
        }
    }

    void addRevokedRemoved(long sessions) {
        revokedRemoved.add(sessions);
        if (total != null) {
            total.addRevokedRemoved(sessions);
        }
    }

    public long loaded() {
        return loaded.sum();
    }

    public long clientSessions() {
        return clientSessions.sum();
    }

    public long alreadyCached() {
        return alreadyCached.sum();
    }

    /** Sessions found cached with client sessions missing, which the loader added. */
    public long repaired() {
        return repaired.sum();
    }

    public long expired() {
        return expired.sum();
    }

    public long gone() {
        return gone.sum();
    }

    public long skipped() {
        return skipped.sum();
    }

    public long failed() {
        return failed.sum();
    }

    public long revokedRemoved() {
        return revokedRemoved.sum();
    }

    /** Sessions of the plan that have been dealt with, whatever the outcome. */
    public long processed() {
        return loaded() + alreadyCached() + expired() + gone() + skipped() + failed();
    }
}
