package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

class LatenciesTest {

    @Test
    void nearestRankPercentiles() {
        Latencies l = new Latencies(IntStream.rangeClosed(1, 100).mapToObj(i -> (double) (101 - i)).toList(), 2, 4.0);
        assertThat(l.percentile(50)).isEqualTo(50.0);
        assertThat(l.percentile(99)).isEqualTo(99.0);
        assertThat(l.percentile(100)).isEqualTo(100.0);
        assertThat(l.perSecond()).isEqualTo(25.0);
        assertThat(l.failures()).isEqualTo(2);
    }

    @Test
    void emptyIsNotANumber() {
        assertThat(new Latencies(List.of(), 0, 1).percentile(99)).isNaN();
    }
}
