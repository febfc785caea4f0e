package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AdaptiveLimitTest {

    private static final double IDLE = 0;
    private static final double BUSY = 2;
    private static final double LATE = 10;
    private static final double ON_TIME = 0.1;
    private static final boolean STARTED = true;
    private static final boolean STARTING = false;
    /** No request slow and at most two at work during the tick. */
    private static final boolean KEPT_UP = true;
    private static final boolean BEHIND = false;

    private static void quiet(AdaptiveLimit limit, int ticks) {
        quiet(limit, ticks, STARTED);
    }

    private static void quiet(AdaptiveLimit limit, int ticks, boolean allStarted) {
        for (int i = 0; i < ticks; i++) {
            limit.update(IDLE, KEPT_UP, LATE, allStarted);
        }
    }

    @Test
    void aPassThatHasSeenNoRequestWaitsForTwoQuietSecondsAfterEveryNodeHasStartedThenRunsEveryWorker() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true);
        assertThat(limit.limit()).as("paused until the node has been quiet").isZero();
        quiet(limit, 50, STARTING);
        assertThat(limit.limit()).as("quiet while a peer is still starting counts for nothing yet").isZero();
        assertThat(limit.describe()).contains("no request at work for 5000 ms, not every node has started");
        quiet(limit, AdaptiveLimit.STARTED_QUIET_TICKS - 1);
        assertThat(limit.limit()).isZero();
        quiet(limit, 1);
        assertThat(limit.limit()).as("two quiet seconds after the last node started").isEqualTo(1);
        quiet(limit, 2);
        assertThat(limit.limit()).isEqualTo(4);
        assertThat(limit.describe()).contains("load limit 4.00 of 4 workers (no request at work)");
    }

    @Test
    void aRequestBeforeTheTwoSecondsStartsTheCountOverAndThenASecondIsEnough() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true);
        quiet(limit, AdaptiveLimit.STARTED_QUIET_TICKS - 1);
        limit.update(BUSY, BEHIND, ON_TIME, STARTED);
        quiet(limit, AdaptiveLimit.QUIET_TICKS - 1);
        assertThat(limit.limit()).isZero();
        quiet(limit, 1);
        assertThat(limit.limit()).isEqualTo(1);
    }

    @Test
    void ifNotEveryNodeSaysItStartedTenQuietSecondsInARowWillDoWhateverItsOwnLoadDoesToTheCpus() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true);
        quiet(limit, AdaptiveLimit.FIRST_QUIET_TICKS - 1, STARTING);
        assertThat(limit.limit()).isZero();
        assertThat(limit.describe()).contains("no request at work for 9900 ms, not every node has started");
        quiet(limit, 1, STARTING);
        assertThat(limit.limit()).isEqualTo(1);
        quiet(limit, 2, STARTING);
        assertThat(limit.limit()).isEqualTo(4);
    }

    @Test
    void afterTheQuietStartTheFirstQuietTickLetsTheLoadRunAndARequestStillStopsIt() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true, true, 0);
        assertThat(limit.limit()).isZero();
        quiet(limit, 1, STARTING);
        assertThat(limit.limit()).as("no second wait, even without every node's signal").isEqualTo(1);
        quiet(limit, 2, STARTING);
        assertThat(limit.limit()).isEqualTo(4);
        limit.update(BUSY, BEHIND, ON_TIME, STARTED);
        assertThat(limit.limit()).isZero();
        quiet(limit, AdaptiveLimit.QUIET_TICKS - 1);
        assertThat(limit.limit()).as("after a request, a quiet second as ever").isZero();
        quiet(limit, 1);
        assertThat(limit.limit()).isEqualTo(1);
    }

    @Test
    void onceItHasSeenARequestAQuietSecondIsEnough() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true);
        limit.update(BUSY, BEHIND, ON_TIME, STARTED);
        quiet(limit, AdaptiveLimit.QUIET_TICKS - 1);
        assertThat(limit.limit()).isZero();
        assertThat(limit.describe()).contains("no request at work for 900 ms");
        quiet(limit, 1);
        assertThat(limit.limit()).isEqualTo(1);
    }

    @Test
    void requestsAtWorkStopItAtOnceWhetherOrNotTheyWaitForACpu() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true);
        quiet(limit, AdaptiveLimit.FIRST_QUIET_TICKS + 2);
        assertThat(limit.limit()).isEqualTo(4);
        limit.update(BUSY, BEHIND, ON_TIME, STARTED);
        assertThat(limit.limit()).isZero();
        assertThat(limit.describe()).contains("load limit 0.00 of 4 workers (2.0 requests at work, behind, threads 0.1 ms late for a CPU)");
    }

    @Test
    void aGapBetweenRequestsIsNoQuietNode() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true);
        for (int i = 0; i < AdaptiveLimit.PATIENCE_TICKS - 10; i++) {
            limit.update(i % 3 == 0 ? BUSY : IDLE, i % 3 != 0, ON_TIME, STARTED);
        }
        assertThat(limit.limit()).isZero();
    }

    @Test
    void onlyAfterFiveMinutesWithoutAQuietSecondDoesItKeepTheFloorSoThatEveryLoadFinishes() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true);
        for (int i = 1; i < AdaptiveLimit.PATIENCE_TICKS; i++) {
            limit.update(i % 2 == 0 ? BUSY : IDLE, i % 2 != 0, LATE, STARTED);
        }
        assertThat(limit.limit()).isZero();
        limit.update(BUSY, BEHIND, LATE, STARTED);
        assertThat(limit.limit()).isEqualTo(AdaptiveLimit.FLOOR);
        assertThat(limit.describe()).contains("no quiet second for 300 s");

        quiet(limit, AdaptiveLimit.QUIET_TICKS); // a quiet second: full speed, and the patience starts over
        assertThat(limit.limit()).isEqualTo(1);
        for (int i = 0; i < 10; i++) {
            limit.update(BUSY, BEHIND, ON_TIME, STARTED);
        }
        assertThat(limit.limit()).isZero();
    }

    private static final double SHARE = 0.25;

    private static void keptUp(AdaptiveLimit limit, int ticks) {
        for (int i = 0; i < ticks; i++) {
            limit.update(i % 2 == 0 ? 1 : IDLE, KEPT_UP, ON_TIME, STARTED); // a request every other tick, none slow
        }
    }

    /** The share a steady spell starts with once its first baseline has been measured. */
    private static final double FIRST_SHARE = SHARE * SteadyShare.START;

    @Test
    void underSteadyTrafficTheLoadTakesAShareOnceTheNodeHasKeptUpForFiveSecondsAndStopsAtTheFirstSlowRequest() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true, false, SHARE);
        limit.update(BUSY, BEHIND, LATE, STARTED); // a restart's backlog
        keptUp(limit, AdaptiveLimit.STEADY_TICKS - 1);
        assertThat(limit.limit()).as("not yet five seconds kept up with").isZero();
        keptUp(limit, SteadyShare.BASELINE_TICKS - 1);
        assertThat(limit.limit()).as("first the requests without the load").isZero();
        assertThat(limit.describe())
                .contains("kept up with for 6 s, share 0.063 of up to 0.25 (not yet measured), paused to measure");
        keptUp(limit, 1);
        assertThat(limit.limit()).as("then one worker a part of the share").isEqualTo(FIRST_SHARE);

        limit.update(1, BEHIND, ON_TIME, STARTED); // one request finished slow, or more than two at work
        assertThat(limit.limit()).as("behind: nothing, at once").isZero();
        keptUp(limit, AdaptiveLimit.STEADY_TICKS - 1 + SteadyShare.BASELINE_TICKS - 1);
        assertThat(limit.limit()).as("five seconds kept up with again, and a baseline, first").isZero();
        keptUp(limit, 1);
        assertThat(limit.limit()).as("the load was running when the node fell behind: half").isEqualTo(FIRST_SHARE / 2);

        limit.update(IDLE, BEHIND, ON_TIME, STARTED); // a slow request that finished just before the tick's first look
        assertThat(limit.limit()).as("behind, even in a tick with none at work").isZero();
        keptUp(limit, AdaptiveLimit.STEADY_TICKS - 1 + SteadyShare.BASELINE_TICKS); // ends with a request at work
        assertThat(limit.limit()).isEqualTo(FIRST_SHARE / 4);

        quiet(limit, AdaptiveLimit.QUIET_TICKS);
        assertThat(limit.limit()).as("a quiet second: more than the share").isEqualTo(1);
        keptUp(limit, SteadyShare.BASELINE_TICKS - 1);
        assertThat(limit.limit()).as("requests again: a baseline first").isZero();
        keptUp(limit, 1);
        assertThat(limit.limit()).as("then the share, not halved by the quiet second").isEqualTo(FIRST_SHARE / 4);
    }

    @Test
    void underSteadyTrafficTheShareFollowsWhatTheLoadCostsTheRequests() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true, false, SHARE);
        keptUp(limit, AdaptiveLimit.STEADY_TICKS - 1);
        for (int tick = 0; tick < SteadyShare.CYCLE_TICKS; tick++) {
            // a request at work every tick, the load tripling its time
            limit.update(1, KEPT_UP, new RequestWatch.Finished(1, limit.limit() > 0 ? 60 : 20), ON_TIME, STARTED);
        }
        assertThat(limit.limit()).as("paused again for the next baseline").isZero();
        assertThat(limit.describe()).contains("requests 60 ms with the load, 20 ms without");
        keptUp(limit, SteadyShare.BASELINE_TICKS);
        assertThat(limit.limit()).isEqualTo(FIRST_SHARE / 2);
    }

    @Test
    void beforeThePassHasSeenARequestQuietTicksAreNoSteadyTraffic() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true, false, SHARE);
        quiet(limit, AdaptiveLimit.STEADY_TICKS + 10, STARTING); // a node waiting for its peers and its traffic
        limit.update(1, KEPT_UP, ON_TIME, STARTED); // the restart's first request
        assertThat(limit.limit()).isZero();
        keptUp(limit, AdaptiveLimit.STEADY_TICKS - 2 + SteadyShare.BASELINE_TICKS - 1);
        assertThat(limit.limit()).isZero();
        keptUp(limit, 1);
        assertThat(limit.limit()).isEqualTo(FIRST_SHARE);
    }

    @Test
    void withoutASteadyShareTrafficKeptUpWithStillStopsTheLoadUntilTheFloor() {
        AdaptiveLimit limit = new AdaptiveLimit(4, true, false, 0);
        keptUp(limit, AdaptiveLimit.PATIENCE_TICKS - 1);
        assertThat(limit.limit()).isZero();
        keptUp(limit, 2);
        assertThat(limit.limit()).isEqualTo(AdaptiveLimit.FLOOR);
    }

    @Test
    void switchedOffItIsAlwaysEveryWorker() {
        AdaptiveLimit limit = new AdaptiveLimit(4, false);
        assertThat(limit.limit()).isEqualTo(4);
        limit.update(BUSY, BEHIND, LATE, STARTED);
        assertThat(limit.limit()).isEqualTo(4);
        assertThat(limit.describe()).contains("adaptive-load=false");
    }
}
