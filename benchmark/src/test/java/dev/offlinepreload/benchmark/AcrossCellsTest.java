package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

class AcrossCellsTest {

    @Test
    void theMedianOfTheRestartsP99sIgnoresRestartsWithoutARequestInTheWindow() {
        assertThat(AcrossCells.medianP99(List.of(constant(100, 300), constant(100, 100), constant(100, 200))))
                .isCloseTo(200, within(2.0));
        assertThat(AcrossCells.medianP99(List.of(constant(100, 300), List.of(), constant(100, 100)))).isCloseTo(200, within(2.0));
        assertThat(AcrossCells.medianP99(List.of(List.of(), List.of()))).isNaN();
    }

    @Test
    void aCellGivesTheCandidatesRatioPerWindowAndCountsWorseVerdictsBothWays() {
        Map<String, Map<Integer, List<Double>>> runs = new LinkedHashMap<>();
        for (int r = 1; r <= 3; r++) {
            // window 0: the candidate three times the reference in every restart; window 1: the reference 30% slower
            runs.put("reference #" + r, Map.of(0, constant(300, 100 + r), 1, constant(300, 1300 * (1 + r / 10.0))));
            runs.put("candidate #" + r, Map.of(0, constant(300, 300 + 3 * r), 1, constant(300, 1000 * (1 + r / 10.0))));
        }
        AcrossCells.Cell cell = AcrossCells.cell("cell", runs, List.of("reference #1", "reference #2", "reference #3"),
                List.of("candidate #1", "candidate #2", "candidate #3"));

        assertThat(cell.ratios()[0]).isCloseTo(3.0, within(0.01));
        assertThat(cell.ratios()[1]).isCloseTo(1 / 1.3, within(0.01));
        assertThat(cell.candidateWorse()).isEqualTo(1);
        assertThat(cell.referenceWorse()).isEqualTo(1);
    }

    @Test
    void theGeometricMeanTreatsHalfAndDoubleAlike() {
        assertThat(AcrossCells.geometricMean(new double[] {0.5, 2.0})).isCloseTo(1.0, within(1e-9));
        assertThat(AcrossCells.geometricMean(new double[] {1.5, 1.5, 1.5})).isCloseTo(1.5, within(1e-9));
    }

    /** {@code count} requests around {@code millis} (within 1%), shuffled: a restart with that p99. */
    private static List<Double> constant(int count, double millis) {
        List<Double> latencies = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            latencies.add(millis * (0.99 + 0.01 * i / count));
        }
        Collections.shuffle(latencies, new Random(1));
        return latencies;
    }
}
