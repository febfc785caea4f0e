package dev.offlinepreload.load;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of one load pass; a pass's counters also add up into the node's lifetime counters (the metrics). A pass
 * also keeps every n-th session it put, for the check after the pass of what the caches still hold.
 */
public final class LoadStats {

    private final LoadStats total;
    private final long sampleEvery;
    private final AtomicLong imported = new AtomicLong();
    private final List<ImportedSession> importedSample = new ArrayList<>();
    final LongAdder loaded = new LongAdder();
    final LongAdder clientSessions = new LongAdder();
    final LongAdder alreadyCached = new LongAdder();
    final LongAdder repaired = new LongAdder();
    final LongAdder expired = new LongAdder();
    final LongAdder gone = new LongAdder();
    final LongAdder skipped = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder revokedRemoved = new LongAdder();
    final LongAdder revokedAtOnce = new LongAdder();
    final LongAdder readForOthers = new LongAdder();

    /** @param total the lifetime counters this pass adds into, or null for the lifetime counters themselves */
    public LoadStats(LoadStats total) {
        this(total, 0);
    }

    /**
     * @param total       the lifetime counters this pass adds into
     * @param sampleEvery keep every n-th session put ({@link #importedSample}); 0 keeps none
     */
    public LoadStats(LoadStats total, long sampleEvery) {
        this.total = total;
        this.sampleEvery = sampleEvery;
    }

    void add(BatchResult result) {
        if (sampleEvery > 0) {
            for (ImportedSession session : result.imported()) {
                if (imported.getAndIncrement() % sampleEvery == 0) {
                    synchronized (importedSample) {
                        importedSample.add(session);
                    }
                }
            }
        }
        loaded.add(result.loaded());
        clientSessions.add(result.clientSessions());
        alreadyCached.add(result.alreadyCached());
        repaired.add(result.repaired());
        expired.add(result.expired());
        gone.add(result.gone());
        skipped.add(result.skipped().size());
        revokedRemoved.add(result.revoked());
        revokedAtOnce.add(result.revoked());
        readForOthers.add(result.readForOthers());
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

    /** Sessions and client sessions put and then taken out again because they were revoked, at once or later. */
    public long revokedRemoved() {
        return revokedRemoved.sum();
    }

    /** Of {@link #revokedRemoved}, those taken out by their own batch, right after it put them. */
    public long revokedAtOnce() {
        return revokedAtOnce.sum();
    }

    /** Sessions this pass put into the caches, or completed there. */
    public long imported() {
        return imported.get();
    }

    /** Every n-th of {@link #imported}'s sessions with the client sessions put for it, in no particular order. */
    public List<ImportedSession> importedSample() {
        synchronized (importedSample) {
            return List.copyOf(importedSample);
        }
    }

    /** Sessions of the plan that have been dealt with, whatever the outcome (and whichever node counts it). */
    public long processed() {
        return loaded() + alreadyCached() + expired() + gone() + skipped() + failed() + readForOthers.sum();
    }
}
