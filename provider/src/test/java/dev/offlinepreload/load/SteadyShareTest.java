package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class SteadyShareTest {

    private static final double MAX = 0.4;

    /** One cycle in which each tick's one request takes {@code without} ms in the baseline and {@code with} ms else. */
    private static void cycle(SteadyShare share, double without, double with) {
        double limit = 0;
        for (int tick = 0; tick < SteadyShare.CYCLE_TICKS; tick++) {
            limit = share.next(new RequestWatch.Finished(1, tick < SteadyShare.BASELINE_TICKS ? without : with));
        }
        assertThat(limit).as("each cycle begins with its baseline").isZero();
    }

    @Test
    void itStartsAtAQuarterPausesTwoSecondsInTenAndRunsTheRestAtTheShare() {
        SteadyShare share = new SteadyShare(MAX);
        for (int tick = 1; tick <= SteadyShare.CYCLE_TICKS; tick++) {
            double limit = share.next(RequestWatch.Finished.NONE);
            assertThat(limit).as("tick %d", tick)
                    .isEqualTo(tick < SteadyShare.BASELINE_TICKS || tick == SteadyShare.CYCLE_TICKS ? 0 : MAX / 4);
        }
        assertThat(share.share()).as("no requests: nothing to decide on").isEqualTo(MAX / 4);
    }

    @Test
    void aLoadThatCostsTheRequestsNothingGrowsByAQuarterEachCycleUpToTheConfiguredShare() {
        SteadyShare share = new SteadyShare(MAX);
        cycle(share, 20, 24); // within 5 ms
        assertThat(share.share()).isEqualTo(MAX / 4 * 1.25);
        for (int i = 0; i < 20; i++) {
            cycle(share, 20, 24);
        }
        assertThat(share.share()).isEqualTo(MAX);

        SteadyShare slower = new SteadyShare(MAX);
        cycle(slower, 200, 219); // within 10%
        assertThat(slower.share()).isEqualTo(MAX / 4 * 1.25);
    }

    @Test
    void aLoadThatSlowsTheRequestsHalvesTheShareDownToASixteenth() {
        SteadyShare share = new SteadyShare(MAX);
        cycle(share, 20, 26);
        assertThat(share.share()).isEqualTo(MAX / 8);
        assertThat(share.describe()).contains("requests 26 ms with the load, 20 ms without");
        for (int i = 0; i < 5; i++) {
            cycle(share, 20, 40);
        }
        assertThat(share.share()).isEqualTo(MAX / 16);
    }

    @Test
    void theBaselineIsThatOfTheLastThreeCyclesAndTheFirstHalfSecondOfEachPhaseIsNotCounted() {
        SteadyShare share = new SteadyShare(MAX);
        cycle(share, 100, 40); // one baseline of slow requests
        cycle(share, 20, 40); // against 60 ms
        cycle(share, 20, 40); // against 47 ms
        double grown = MAX / 4 * 1.25 * 1.25 * 1.25;
        assertThat(share.share()).as("the slow baseline still counts").isCloseTo(grown, within(1e-12));
        cycle(share, 20, 40);
        assertThat(share.share()).as("three cycles on, it is gone").isCloseTo(grown / 2, within(1e-12));

        SteadyShare settling = new SteadyShare(MAX);
        for (int tick = 0; tick < SteadyShare.CYCLE_TICKS; tick++) {
            int inPhase = tick < SteadyShare.BASELINE_TICKS ? tick : tick - SteadyShare.BASELINE_TICKS;
            double millis = tick < SteadyShare.BASELINE_TICKS ? 20 : 22;
            boolean settlingLoad = tick >= SteadyShare.BASELINE_TICKS && inPhase < SteadyShare.SETTLE_TICKS;
            settling.next(new RequestWatch.Finished(1, settlingLoad ? 500 : millis));
        }
        assertThat(settling.share()).as("the requests of the first ticks of a phase do not count")
                .isEqualTo(MAX / 4 * 1.25);
    }

    @Test
    void tooFewRequestsDecideNothing() {
        SteadyShare share = new SteadyShare(MAX);
        for (int tick = 0; tick < SteadyShare.CYCLE_TICKS; tick++) {
            int inPhase = tick < SteadyShare.BASELINE_TICKS ? tick : tick - SteadyShare.BASELINE_TICKS;
            boolean counted = inPhase >= SteadyShare.SETTLE_TICKS && inPhase < SteadyShare.SETTLE_TICKS + 9;
            share.next(counted ? new RequestWatch.Finished(1, tick < SteadyShare.BASELINE_TICKS ? 20 : 200)
                    : RequestWatch.Finished.NONE);
        }
        assertThat(share.share()).as("nine a side").isEqualTo(MAX / 4);
    }

    @Test
    void fallingBehindWhileTheLoadRunsHalvesTheShareAndABaselineComesFirstAgain() {
        SteadyShare share = new SteadyShare(MAX);
        share.interrupted(true);
        assertThat(share.share()).as("behind during a baseline: not the load's doing").isEqualTo(MAX / 4);
        for (int tick = 0; tick < SteadyShare.BASELINE_TICKS + 3; tick++) {
            share.next(RequestWatch.Finished.NONE);
        }
        share.interrupted(false);
        assertThat(share.share()).as("a quiet second").isEqualTo(MAX / 4);
        for (int tick = 0; tick < SteadyShare.BASELINE_TICKS + 3; tick++) {
            share.next(RequestWatch.Finished.NONE);
        }
        share.interrupted(true);
        assertThat(share.share()).isEqualTo(MAX / 8);
        assertThat(share.next(RequestWatch.Finished.NONE)).as("a baseline again").isZero();
    }
}
