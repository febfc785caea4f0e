package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class RateLimitTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    @Test
    void noCapNeverWaits() {
        RateLimit off = new RateLimit(0, clock::get);
        assertThat(off.reserve(1_000_000)).isZero();
        assertThat(off.reserve(1_000_000)).isZero();
    }

    @Test
    void batchesAreSpacedSoTheRateStaysUnderTheCap() {
        RateLimit limit = new RateLimit(1000, clock::get);
        assertThat(limit.reserve(500)).as("the first batch goes at once").isZero();
        assertThat(limit.reserve(500)).as("the second waits for the first's half second").isEqualTo(500_000_000L);
        assertThat(limit.reserve(1000)).isEqualTo(1_000_000_000L);
    }

    @Test
    void idleTimeIsNotSavedUpForABurst() {
        RateLimit limit = new RateLimit(1000, clock::get);
        limit.reserve(1000);
        clock.addAndGet(10_000_000_000L); // ten idle seconds
        assertThat(limit.reserve(1000)).isZero();
        assertThat(limit.reserve(1000)).isEqualTo(1_000_000_000L);
    }
}
