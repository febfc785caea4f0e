package dev.offlinepreload.report;

import java.util.function.Consumer;

import org.jboss.logging.Logger;

/**
 * The capacity WARN, at most once per cluster topology: every pass checks, but an operator hears of a shortfall once
 * per cluster size (and again after the next join, leave or merge), not at every re-warm.
 */
public final class CapacityLog {

    private static final Logger log = Logger.getLogger("dev.offlinepreload.Preload");

    private final Consumer<String> warn;
    private long warnedFor = Long.MIN_VALUE;

    public CapacityLog() {
        this(log::warn);
    }

    /** @param warn where the WARN goes (a test's list) */
    public CapacityLog(Consumer<String> warn) {
        this.warn = warn;
    }

    /**
     * @param topologyId  the topology the pass loaded for
     * @param leftOutHere sessions this node owns that the pass left out for want of room
     */
    public synchronized void afterPass(long topologyId, CapacityAdvice advice, String node, long leftOutHere) {
        if ((advice.fits() && leftOutHere == 0) || topologyId == warnedFor) {
            return;
        }
        warnedFor = topologyId;
        warn.accept(advice.warning(node, leftOutHere));
    }
}
