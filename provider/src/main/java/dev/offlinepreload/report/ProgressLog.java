package dev.offlinepreload.report;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

import dev.offlinepreload.load.BatchResult.SkippedRow;
import dev.offlinepreload.load.LoadRun;
import dev.offlinepreload.load.LoadStats;
import dev.offlinepreload.plan.LoadPlan;
import org.jboss.logging.Logger;

/** The operator's view of a pass: one start line, progress at most every 10 s, a summary, and skipped rows by id. */
public final class ProgressLog implements LoadRun.SkipLog {

    private static final Logger log = Logger.getLogger("dev.offlinepreload.Preload");
    private static final long PROGRESS_INTERVAL_NANOS = 10_000_000_000L;
    /** Skipped rows are logged by id up to this many per pass; the summary counts the rest. */
    private static final int MAX_SKIP_LINES = 20;

    private final String node;
    private final long startNanos = System.nanoTime();
    private final AtomicInteger skipLines = new AtomicInteger();
    private volatile long lastProgressNanos = startNanos;

    public ProgressLog(String node) {
        this.node = node;
    }

    public void started(LoadPlan plan, String settings) {
        long ranges = plan.batches().stream().filter(b -> b.range()).count();
        log.infof("Offline session preload on %s: loading %d sessions (%d recently refreshed first; %d in the database, "
                        + "%d owned by this node, %d already cached, %d over this node's limit of %d) in %d batches (%d key "
                        + "ranges, %d id lists); %s",
                node, plan.toLoad(), plan.hot(), plan.seen(), plan.owned(), plan.alreadyCached(), plan.overCapacity(),
                plan.limit(), plan.batches().size(), ranges, plan.batches().size() - ranges, settings);
    }

    /** The start line of the hot tier's own stage (volatile sessions): it loads while requests are at work. */
    public void startedHot(LoadPlan plan, Duration window) {
        log.infof("Offline session preload on %s: first the %d sessions refreshed within %d s that this node owns and "
                        + "does not hold (%d refreshed then, %d of them this node's within its limit of %d, %d already "
                        + "cached), while requests run; then the rest", node, plan.toLoad(), window.toSeconds(), plan.seen(),
                plan.owned(), plan.limit(), plan.alreadyCached());
    }

    /** Called from the coordinator's ticker; prints only if the interval has passed. */
    public void progress(LoadStats stats, long planned, String limit) {
        long now = System.nanoTime();
        if (now - lastProgressNanos < PROGRESS_INTERVAL_NANOS) {
            return;
        }
        lastProgressNanos = now;
        long done = stats.processed();
        double seconds = (now - startNanos) / 1e9;
        double rate = seconds > 0 ? done / seconds : 0;
        long eta = rate > 0 ? Math.round((planned - done) / rate) : -1;
        log.infof("Offline session preload on %s: %d of %d sessions (%d%%), %.0f sessions/s, about %s left; %s",
                node, done, planned, planned == 0 ? 100 : done * 100 / planned, rate, eta < 0 ? "?" : eta + " s", limit);
    }

    /**
     * The summary line of a pass.
     *
     * @param missing               sessions the pass loaded that the caches no longer hold whole when it ends (-1: not checked)
     * @param missingClientSessions of the client sessions the pass put for them, those the caches no longer hold
     */
    public void finished(LoadStats stats, String outcome, long missing, long missingClientSessions) {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        String line = String.format(Locale.ROOT, "Offline session preload on %s %s in %.1f s: %d loaded (%d client "
                        + "sessions, %.0f sessions/s), %d already cached (%d of them completed), %d expired, %d gone, "
                        + "%d skipped, %d failed, %d removed again as revoked (%d by their own batch)%s",
                node, outcome, seconds, stats.loaded(), stats.clientSessions(), seconds > 0 ? stats.loaded() / seconds : 0,
                stats.alreadyCached(), stats.repaired(), stats.expired(), stats.gone(), stats.skipped(), stats.failed(),
                stats.revokedRemoved(), stats.revokedAtOnce(), missing < 0 ? "" : "; " + missing
                        + " missing from the caches afterwards (" + missingClientSessions + " client sessions)"
                        + (stats.importedSample().size() < stats.imported()
                        ? " (estimated from " + stats.importedSample().size() + " of " + stats.imported() + " checked)" : ""));
        if (missing > 0) {
            log.warn(line + " (dropped by the cache after they were put: the next topology change loads them again)");
        } else {
            log.info(line);
        }
    }

    @Override
    public void skipped(SkippedRow row) {
        int n = skipLines.incrementAndGet();
        if (n <= MAX_SKIP_LINES) {
            log.warnf("Offline session preload on %s: skipped offline session %s: %s", node, row.id(), row.reason());
        } else if (n == MAX_SKIP_LINES + 1) {
            log.warnf("Offline session preload on %s: more rows skipped; not logging each (see the summary)", node);
        }
    }
}
