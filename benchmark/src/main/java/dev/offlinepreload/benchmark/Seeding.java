package dev.offlinepreload.benchmark;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder;
import dev.offlinepreload.testsuite.db.OfflineSessionSeeder.Realm;
import dev.offlinepreload.testsuite.db.SeedShape;

/**
 * The benchmark's data set: {@value #REALMS} realms, grown in steps to each measured size, the same for every phase
 * that loads or plans ({@link LoaderComparison}, {@link PlanningScale}).
 */
final class Seeding {

    /** Realms, clients per realm and users per realm of the seeded data (sessions spread evenly over the realms). */
    static final int REALMS = 3;
    static final int CLIENTS = 2;
    static final int USERS = 1000;
    static final SeedShape SHAPE = new SeedShape(0, 1, 2, 0, 0, 14 * 24 * 3600);
    /**
     * From this many sessions in one step on, they are seeded in bulk ({@link OfflineSessionSeeder#bulkLoad()}): the
     * loader phases' steps (up to 1M) are seeded as before.
     */
    static final int BULK = 2_000_000;

    private final KeycloakCluster cluster;
    private final KeycloakNode node;
    private final List<Realm> realms = new ArrayList<>();
    private final String prefix;
    private final SeedShape shape;
    private int seeded;

    Seeding(KeycloakCluster cluster, KeycloakNode node) {
        this(cluster, node, "bench-", SHAPE);
    }

    Seeding(KeycloakCluster cluster, KeycloakNode node, String prefix, SeedShape shape) {
        this.cluster = cluster;
        this.node = node;
        this.prefix = prefix;
        this.shape = shape;
    }

    void upTo(int size, Database db) {
        if (realms.isEmpty()) {
            try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
                for (int r = 1; r <= REALMS; r++) {
                    realms.add(seeder.createRealm(node, prefix + r, Math.max(CLIENTS, shape.clientSessionsPerSession()), USERS));
                }
            }
            seeded = (int) db.offlineSessions(); // the template sessions
        }
        long start = System.nanoTime();
        int missing = size - seeded;
        if (missing >= BULK) {
            try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster);
                 OfflineSessionSeeder.BulkLoad bulk = seeder.bulkLoad()) {
                Progress.say("seeding %d sessions in bulk: %d non-unique indexes dropped until the rows are in", missing,
                        bulk.indexDefinitions().size());
                insert(missing);
                Progress.say("seeded %d sessions in %.1f s; building the indexes again", missing, (System.nanoTime() - start) / 1e9);
            }
        } else {
            insert(missing);
        }
        seeded = size;
        Progress.say("seeded %d sessions (up to %d) in %.1f s", missing, size, (System.nanoTime() - start) / 1e9);
        if (db.offlineSessions() != size) {
            throw new IllegalStateException("expected " + size + " offline sessions, found " + db.offlineSessions());
        }
    }

    /** Seeds {@code missing} sessions spread over the realms. */
    private void insert(int missing) {
        // One INSERT per realm, all realms at once: PostgreSQL runs each statement on one core.
        List<Thread> inserts = new ArrayList<>();
        List<RuntimeException> failures = Collections.synchronizedList(new ArrayList<>());
        for (int r = 0; r < REALMS; r++) {
            int share = missing / REALMS + (r == REALMS - 1 ? missing % REALMS : 0);
            Realm realm = realms.get(r);
            Thread insert = new Thread(() -> {
                try (OfflineSessionSeeder seeder = new OfflineSessionSeeder(cluster)) {
                    if (share > 0) {
                        seeder.seed(realm, shape.withSessions(share));
                    }
                } catch (RuntimeException e) {
                    failures.add(e);
                }
            }, "seed-" + realm.name());
            insert.start();
            inserts.add(insert);
        }
        for (Thread insert : inserts) {
            try {
                insert.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
    }
}
