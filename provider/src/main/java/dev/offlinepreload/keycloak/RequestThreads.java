package dev.offlinepreload.keycloak;

import java.util.ArrayList;
import java.util.List;

/**
 * Counts Keycloak's request threads at work. Quarkus runs Keycloak's blocking endpoints (token, introspection,
 * userinfo, admin, login pages) on its worker pool, whose threads are named {@value #PREFIX}N; an idle one is parked
 * in the pool (WAITING or TIMED_WAITING), one serving a request runs or reads from the database (RUNNABLE). The list
 * of those threads is looked up once a second, the states at every call: a few microseconds.
 */
final class RequestThreads {

    static final String PREFIX = "executor-thread-";
    private static final long REFRESH_NANOS = 1_000_000_000L;

    private List<Thread> threads = List.of();
    private long refreshedAt = System.nanoTime() - REFRESH_NANOS;

    /** Called from one thread (the governor's). */
    int busy() {
        long now = System.nanoTime();
        if (now - refreshedAt >= REFRESH_NANOS) {
            threads = lookUp();
            refreshedAt = now;
        }
        int busy = 0;
        for (Thread thread : threads) {
            if (thread.getState() == Thread.State.RUNNABLE) {
                busy++;
            }
        }
        return busy;
    }

    private static List<Thread> lookUp() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] all = new Thread[root.activeCount() * 2 + 16];
        int count = root.enumerate(all, true);
        List<Thread> found = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            if (all[i].getName().startsWith(PREFIX)) {
                found.add(all[i]);
            }
        }
        return found;
    }
}
