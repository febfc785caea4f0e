package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RowCheckTest {

    private static final int NOW = 1_800_000_000;

    @Test
    void acceptsPlausibleTimestamps() {
        assertThat(RowCheck.timestampProblem(NOW - 100, NOW - 10, NOW)).isNull();
        assertThat(RowCheck.timestampProblem(NOW - 100, NOW - 100, NOW)).isNull();
        assertThat(RowCheck.timestampProblem(NOW, NOW + 60, NOW)).as("small clock skew").isNull();
        assertThat(RowCheck.timestampProblem(NOW - 100, NOW - 110, NOW)).as("refreshed on a node whose clock is behind").isNull();
    }

    @Test
    void rejectsNonsense() {
        assertThat(RowCheck.timestampProblem(0, NOW, NOW)).contains("non-positive");
        assertThat(RowCheck.timestampProblem(NOW, -5, NOW)).contains("non-positive");
        assertThat(RowCheck.timestampProblem(NOW - 10, NOW - 7200, NOW)).contains("before creation");
        assertThat(RowCheck.timestampProblem(NOW, NOW + 7200, NOW)).contains("future");
    }
}
