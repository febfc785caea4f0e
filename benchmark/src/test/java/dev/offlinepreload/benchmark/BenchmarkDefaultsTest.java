package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.offlinepreload.config.PreloadConfig;
import dev.offlinepreload.config.PreloadOption;
import org.junit.jupiter.api.Test;

/** The report's "defaults" row must measure what an operator gets without configuring anything. */
class BenchmarkDefaultsTest {

    @Test
    void reportUsesTheProvidersDefaultBatchSize() {
        assertThat(Report.DEFAULT_BATCH).isEqualTo(Integer.parseInt(PreloadOption.BATCH_SIZE.defaultValue()));
    }

    @Test
    void reportUsesTheProvidersDefaultWorkers() {
        int cpus = Runtime.getRuntime().availableProcessors();
        assertThat(Report.defaultWorkers()).isEqualTo(PreloadConfig.parse(key -> null, cpus).workers());
    }

    @Test
    void sessionCountsReadLikeTheFieldReports() {
        assertThat(Report.sessionsLabel(250_000)).isEqualTo("250k");
        assertThat(Report.sessionsLabel(1_000_000)).isEqualTo("1M");
        assertThat(Report.sessionsLabel(1_500_000)).isEqualTo("1.5M");
        assertThat(Report.sessionsLabel(1234)).isEqualTo("1234");
    }
}
