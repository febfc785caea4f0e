package dev.offlinepreload.report;

import java.util.function.Consumer;

import org.jboss.logging.Logger;

/**
 * The capacity WARN, at most once per cluster topology: every pass checks, but an operator hears of a shortfall once
 * per cluster size (and again after the next join, leave or merge), not at every re-warm. While the cluster has fewer
 * members than {@code expected-cluster-size} (a restart passing through smaller clusters) the same advice goes to INFO:
 * it describes a cluster that is about to grow.
 */
public final class CapacityLog {

    private static final Logger log = Logger.getLogger("dev.offlinepreload.Preload");

    private final Consumer<String> warn;
    private final Consumer<String> info;
    private long warnedFor = Long.MIN_VALUE;

    public CapacityLog() {
        this(log::warn, log::info);
    }

    /** @param warn where the WARN goes, {@code info} the advice for a cluster below its expected size (a test's lists) */
    public CapacityLog(Consumer<String> warn, Consumer<String> info) {
        this.warn = warn;
        this.info = info;
    }

    /**
     * @param topologyId  the topology the pass loaded for
     * @param leftOutHere sessions this node owns that the pass left out for want of room
     * @param fullSize    the cluster has at least {@code expected-cluster-size} members
     */
    public synchronized void afterPass(long topologyId, CapacityAdvice advice, String node, long leftOutHere,
                                       boolean fullSize) {
        if ((advice.fits() && leftOutHere == 0) || topologyId == warnedFor) {
            return;
        }
        warnedFor = topologyId;
        (fullSize ? warn : info).accept(advice.warning(node, leftOutHere));
    }
}
