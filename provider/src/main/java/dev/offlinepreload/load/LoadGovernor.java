package dev.offlinepreload.load;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleConsumer;

/**
 * Runs an {@link AdaptiveLimit} while a node loads: a daemon thread sleeps {@value #SAMPLE_MILLIS} ms at a time,
 * counting the Keycloak requests at work, those that finished slow and how long the finished ones took (and measuring
 * how late it wakes, the scheduling delay every thread of the node sees, for the progress line); every {@link AdaptiveLimit#TICK_MILLIS} ms it updates
 * the limit. Workers ask before each batch whether they may run ({@link #awaitTurn}) and, below one worker, rest after
 * it ({@link #rest}).
 * Its own cost: one wake-up every 25 ms.
 */
public final class LoadGovernor implements AutoCloseable {

    static final int SAMPLE_MILLIS = 25;
    static final int SAMPLES_PER_TICK = AdaptiveLimit.TICK_MILLIS / SAMPLE_MILLIS;
    /** How often an idle worker looks whether the limit lets it run again. */
    private static final long IDLE_WORKER_MILLIS = 50;
    /** Longest single rest, so that a rising limit or a stop is seen soon. */
    private static final long MAX_REST_STEP_MILLIS = 100;

    private final AdaptiveLimit limit;
    /** The sampler's own view of the requests (it is its only reader). */
    private final RequestWatch requests;
    private final BooleanSupplier allStarted;
    /** Asked of {@link #allStarted} until it says yes; read by the sampler only. */
    private boolean started;
    private final DoubleConsumer gauge;
    private final boolean hotUnpaused;
    private final Thread sampler;
    private volatile double current;
    private volatile boolean closed;

    /**
     * @param requests     the Keycloak requests at work, and those that finished slow, since the previous look
     * @param allStarted   whether every member of the cluster has finished starting (asked every tick until it has)
     * @param gauge        receives the limit after every tick
     * @param hotUnpaused  whether hot batches run on the first worker whatever the limit: where a cached session saves
     *                     a request its database reads (volatile sessions), loading it in a batch costs less than the
     *                     lazy load it saves; with persistent sessions it saves only the import, which the batch does too
     */
    public LoadGovernor(AdaptiveLimit limit, RequestWatch requests, BooleanSupplier allStarted, DoubleConsumer gauge,
                        boolean hotUnpaused) {
        this.limit = limit;
        this.requests = requests;
        this.allStarted = allStarted;
        this.gauge = gauge;
        this.hotUnpaused = hotUnpaused;
        this.current = limit.limit();
        gauge.accept(current);
        this.sampler = new Thread(this::sample, "offline-preload-governor");
        sampler.setDaemon(true);
    }

    public LoadGovernor start() {
        sampler.start();
        return this;
    }

    private void sample() {
        double lateSum = 0;
        double busySum = 0;
        boolean keepingUp = true;
        int samples = 0;
        try {
            while (!closed) {
                long before = System.nanoTime();
                Thread.sleep(SAMPLE_MILLIS);
                long lateNanos = System.nanoTime() - before - TimeUnit.MILLISECONDS.toNanos(SAMPLE_MILLIS);
                lateSum += Math.max(0, lateNanos) / 1e6;
                int busy = requests.busy();
                int slow = requests.slow();
                busySum += busy;
                keepingUp &= busy <= RequestWatch.STEADY_AT_WORK && slow == 0;
                if (++samples == SAMPLES_PER_TICK) {
                    started = started || allStarted.getAsBoolean();
                    current = limit.update(busySum / samples, keepingUp, requests.finished(), lateSum / samples,
                            started);
                    gauge.accept(current);
                    lateSum = 0;
                    busySum = 0;
                    keepingUp = true;
                    samples = 0;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the limit has paused the load (requests at work and no share for them, and not yet the floor). */
    public boolean paused() {
        return activeWorkers(current) == 0;
    }

    /** Workers the limit lets run now: none at 0 (paused), otherwise at least one. */
    static int activeWorkers(double limit) {
        return limit <= 0 ? 0 : Math.max(1, (int) Math.round(limit));
    }

    /**
     * Waits until worker {@code worker} (1-based) may run a batch; with {@code hotUnpaused}, a hot batch next
     * ({@code hot}) runs on the first worker whatever the limit.
     *
     * @return false if {@code stop} said so meanwhile
     */
    public boolean awaitTurn(int worker, BooleanSupplier hot, BooleanSupplier stop) throws InterruptedException {
        while (!stop.getAsBoolean()) {
            if (worker <= activeWorkers(current) || hotUnpaused && worker == 1 && hot.getAsBoolean()) {
                return true;
            }
            Thread.sleep(IDLE_WORKER_MILLIS);
        }
        return false;
    }

    /**
     * Below one worker, the one worker rests after a batch so that it works only the limit's share of the time: after
     * a batch of {@code batchNanos}, {@code batchNanos × (1 − limit) / limit}, cut short when the limit rises or on stop.
     */
    public void rest(long batchNanos, BooleanSupplier stop) throws InterruptedException {
        double share = current;
        if (share >= 1 || share <= 0) {
            return; // at 0 the next awaitTurn waits
        }
        long until = System.nanoTime() + (long) (batchNanos * (1 - share) / share);
        for (long left = until - System.nanoTime(); left > 0 && current < 1 && !stop.getAsBoolean();
             left = until - System.nanoTime()) {
            Thread.sleep(Math.min(TimeUnit.NANOSECONDS.toMillis(left) + 1, MAX_REST_STEP_MILLIS));
        }
    }

    public String describe() {
        return limit.describe();
    }

    @Override
    public void close() {
        closed = true;
        sampler.interrupt();
    }
}
