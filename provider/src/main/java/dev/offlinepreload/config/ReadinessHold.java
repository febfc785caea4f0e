package dev.offlinepreload.config;

import java.util.Locale;

/** What a node's startup, and so its readiness, waits for: the values of the option {@code hold-readiness}. */
public enum ReadinessHold {

    /**
     * With volatile sessions and a hot window (the default): the recently refreshed sessions of the node's first pass,
     * at most a minute, and only where every expected node has joined by then (a node that waits for others would
     * hold them back where pods start one by one). Its first requests then find them cached instead of meeting their
     * load: a hot tier loaded as the traffic came left the restart behind stock's for 50 s (restart window bv). With
     * persistent sessions nothing.
     */
    AUTO,
    /** The whole first pass, gate included. */
    TRUE,
    /** Nothing. */
    FALSE;

    /** As an operator writes it. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }
}
