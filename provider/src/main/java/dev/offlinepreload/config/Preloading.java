package dev.offlinepreload.config;

import java.util.Locale;

/** When a node preloads: the values of the option {@code preloading}. */
public enum Preloading {

    /**
     * With volatile sessions only (the default). There a cached session spares a request its database reads; with
     * persistent sessions every refresh reads, locks and updates both rows whether the session is cached or not, and
     * over eleven measured restart windows the backlog drained sooner without preloading (docs/performance.md).
     */
    AUTO,
    /** With either mode of sessions. */
    TRUE,
    /** Never. */
    FALSE;

    /** As an operator writes it. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether a node whose sessions are persistent (or volatile) preloads. */
    public boolean preloads(boolean persistentSessions) {
        return this == TRUE || this == AUTO && !persistentSessions;
    }
}
