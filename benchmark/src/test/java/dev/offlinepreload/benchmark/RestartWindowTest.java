package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class RestartWindowTest {

    @Test
    void theMedianOfTheRepeatsIgnoresWindowsWithoutRequests() {
        assertThat(RestartWindow.median(List.of(5.0, 1.0, 3.0))).isEqualTo(3.0);
        assertThat(RestartWindow.median(List.of(4.0, 1.0))).isEqualTo(2.5);
        assertThat(RestartWindow.median(List.of(Double.NaN, 7.0))).isEqualTo(7.0);
        assertThat(RestartWindow.median(List.of())).isNaN();
    }
}
