package dev.offlinepreload.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.offlinepreload.plan.Batch;
import org.jboss.logging.Logger;

/**
 * The delayed revocation check, with its queue, its thread and its shutdown eviction in one place. Each batch checks
 * itself right after importing (removals seen by the caches, during its read or shortly before); a delete that bypassed
 * the caches (a user or client deleted, the expiration task, a DBA), or one that committed later than that look-back,
 * is caught here by one more existence check of the batch's sessions. Whatever cannot be checked (database down, node
 * shutting down) is evicted instead: an evicted session is only loaded again lazily, and lazily loading reads the
 * database. There is no way to switch it off: it is the only net for deletes the caches never see.
 * <p>
 * A check falls due {@code delay} after its batch and then gives way to the node's requests, as the load does: one check
 * at a time, and only on a node that is not behind. It runs once no request has been at work for {@value #QUIET_MILLIS}
 * ms, or under steady traffic: once for {@value #STEADY_MILLIS} ms no request has taken longer than
 * {@link RequestWatch#SLOW_MILLIS} ms and at most {@value RequestWatch#STEADY_AT_WORK} have been at work at a time.
 * Each check is followed by a rest nine times as long as it took, so that checks take at most a tenth of the time, except on an idle
 * node (no request for {@value #IDLE_MILLIS} ms, when the load takes every worker too). A check that has waited one
 * more {@code delay} runs at once, and without a rest before it: every check runs within {@code 2 × delay} of its batch
 * unless the checks queued before it take longer than that (a database slower than the loads). In the restart windows
 * of docs/performance.md the hot tier's checks, all due within a few seconds on every node while the restart's backlog
 * was still draining, were most of what delayed the drain (run cb); waiting only for a quiet moment, they found none
 * under the traffic and ran at their bound, back to back (run cd).
 * <p>
 * Each time the queue empties, one INFO line ({@link Round}) says how many checks ran, how long after their loads,
 * how many in a quiet moment, under steady traffic and at their bound: how long a session deleted behind the caches
 * stayed cached.
 */
public final class RevocationGuard implements AutoCloseable {

    private static final Logger log = Logger.getLogger(RevocationGuard.class);

    /** How long the node must have had no request at work before a due check runs. */
    static final long QUIET_MILLIS = 100;
    /** How long without a request at work makes the node idle: a check then needs no rest before it. */
    static final long IDLE_MILLIS = 1_000;
    /** How long the node must have kept up with its requests before a due check runs under traffic. */
    static final long STEADY_MILLIS = 1_000;
    /** How often a due check looks at the requests. */
    private static final long SAMPLE_MILLIS = 25;
    /** The most of the time checks take while they are within their bound: a check of d is followed by a rest of 9 d. */
    static final double SHARE = 0.1;

    /** What let a check run. */
    enum Turn { QUIET, STEADY, BOUND }

    private record Pending(Batch batch, List<ImportedSession> sessions, LoadStats stats, long offeredNanos,
                           long deadlineNanos) {
    }

    /**
     * The checks since the queue last emptied: {@code checks} batches of {@code sessions} sessions, begun
     * {@code soonestSeconds} to {@code latestSeconds} after their batches were loaded, {@code steady} of them under
     * steady traffic and {@code atBound} at their bound of {@code boundSeconds} (the others in a quiet moment),
     * {@code removed} sessions removed as deleted meanwhile and {@code evicted} evicted because their check failed.
     */
    record Round(int checks, int sessions, double soonestSeconds, double latestSeconds, int steady, int atBound,
                 double boundSeconds, int removed, int evicted) {

        String message() {
            return String.format(Locale.ROOT, "Revocation re-check: %d batch%s (%,d sessions) checked %.1f-%.1f s after "
                    + "their load, %d in a quiet moment, %d under steady traffic, %d at their bound of %.0f s; %d removed "
                    + "as deleted meanwhile%s", checks, checks == 1 ? "" : "es", sessions, soonestSeconds, latestSeconds,
                    checks - steady - atBound, steady, atBound, boundSeconds, removed,
                    evicted == 0 ? "" : ", " + evicted + " evicted unchecked");
        }

        Round plus(int batchSessions, double afterSeconds, Turn turn, int removedNow, int evictedNow) {
            return new Round(checks + 1, sessions + batchSessions, checks == 0 ? afterSeconds : Math.min(soonestSeconds, afterSeconds),
                    Math.max(latestSeconds, afterSeconds), steady + (turn == Turn.STEADY ? 1 : 0),
                    atBound + (turn == Turn.BOUND ? 1 : 0), boundSeconds, removed + removedNow, evicted + evictedNow);
        }
    }

    private final SessionStore store;
    private final Duration delay;
    /** This guard's own view of the requests (its thread is its only reader). */
    private final RequestWatch requests;
    private final Set<Pending> pending = ConcurrentHashMap.newKeySet();
    /** One thread: checks are spread out, not run side by side (their order is their batches'). */
    private final ScheduledExecutorService checks = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "offline-preload-revocation-check");
        t.setDaemon(true);
        return t;
    });
    /*
     * Read and written by the check thread only: when the rest after the last check ends, and the last samples that saw
     * a request at work and the node behind (each sample sees what happened since the one before, a check or a wait
     * for the next batch in between, so the node has been quiet or steady since those samples).
     */
    private long restUntilNanos = System.nanoTime();
    private long busySeenNanos = restUntilNanos;
    private long behindSeenNanos = restUntilNanos;
    /** The checks since the queue last emptied; read and written by the check thread only. */
    private Round round;
    private final Consumer<Round> report;

    public RevocationGuard(SessionStore store, Duration delay) {
        this(store, delay, r -> log.info(r.message()));
    }

    RevocationGuard(SessionStore store, Duration delay, Consumer<Round> report) {
        this.store = store;
        this.delay = delay;
        this.requests = store.newRequestWatch();
        this.report = report;
        this.round = emptyRound();
    }

    private Round emptyRound() {
        return new Round(0, 0, 0, 0, 0, 0, 2 * delay.toMillis() / 1000.0, 0, 0);
    }

    /** Schedules the delayed check of a batch's imported sessions; removals are counted into {@code stats}. */
    public void offer(Batch batch, List<ImportedSession> imported, LoadStats stats) {
        if (imported.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        Pending p = new Pending(batch, imported, stats, now, now + 2 * delay.toNanos());
        pending.add(p);
        try {
            checks.schedule(() -> check(p), delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            evict(p); // closed meanwhile
        }
    }

    /** Batches whose delayed check has not run yet. */
    public int pending() {
        return pending.size();
    }

    private void check(Pending p) {
        Turn turn;
        try {
            turn = awaitTurn(p.deadlineNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            evict(p); // closed while it waited
            return;
        }
        if (!pending.contains(p)) {
            return; // evicted meanwhile
        }
        long started = System.nanoTime();
        int removed = 0;
        int evicted = 0;
        try {
            removed = store.removeDeleted(p.batch(), p.sessions());
            p.stats().addRevokedRemoved(removed);
        } catch (RuntimeException e) {
            log.warnf("Could not re-check %d loaded offline sessions against the database (%s); evicting them from "
                    + "the cache so they are loaded again, lazily, from the database", p.sessions().size(), e.toString());
            store.evict(p.sessions());
            evicted = p.sessions().size();
        }
        pending.remove(p); // only now: pending() counts the checks not done yet
        long ended = System.nanoTime();
        restUntilNanos = ended + (long) ((ended - started) * (1 - SHARE) / SHARE);
        round = round.plus(p.sessions().size(), (started - p.offeredNanos()) / 1e9, turn, removed, evicted);
        if (pending.isEmpty()) {
            report.accept(round);
            round = emptyRound();
        }
    }

    /**
     * Waits for a quiet or an idle node, or, after the rest that follows the previous check, for steady traffic; but
     * not past {@code deadlineNanos}.
     */
    private Turn awaitTurn(long deadlineNanos) throws InterruptedException {
        for (long now = System.nanoTime(); now - deadlineNanos < 0; now = System.nanoTime()) {
            int busy = requests.busy();
            if (busy > 0) {
                busySeenNanos = now;
            }
            if (requests.slow() > 0 || busy > RequestWatch.STEADY_AT_WORK) {
                behindSeenNanos = now;
            }
            long quietMillis = TimeUnit.NANOSECONDS.toMillis(now - busySeenNanos);
            boolean rested = now - restUntilNanos >= 0;
            if (quietMillis >= IDLE_MILLIS || rested && quietMillis >= QUIET_MILLIS) {
                return Turn.QUIET;
            }
            if (rested && TimeUnit.NANOSECONDS.toMillis(now - behindSeenNanos) >= STEADY_MILLIS) {
                return Turn.STEADY;
            }
            Thread.sleep(Math.min(SAMPLE_MILLIS, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - now) + 1));
        }
        return Turn.BOUND;
    }

    private void evict(Pending p) {
        if (pending.remove(p)) {
            store.evict(p.sessions());
        }
    }

    /** After {@link #close()}: waits for a check in flight (its statements are bounded by database-timeout-seconds). */
    public boolean awaitTermination(long millis) throws InterruptedException {
        return checks.awaitTermination(millis, TimeUnit.MILLISECONDS);
    }

    /** Stops checking and evicts every session still waiting for its check (node shutdown). */
    @Override
    public void close() {
        checks.shutdownNow();
        List<Pending> left = new ArrayList<>(pending);
        left.forEach(this::evict);
        if (!left.isEmpty()) {
            log.debugf("Evicted the sessions of %d batches whose revocation re-check could not wait", left.size());
        }
    }
}
