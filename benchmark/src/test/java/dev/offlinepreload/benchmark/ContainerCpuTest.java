package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ContainerCpuTest {

    @Test
    void cgroupV2CpuStatInMicroseconds() {
        assertThat(ContainerCpu.parse("usage_usec 12345678\nuser_usec 10000000\nsystem_usec 2345678\n"))
                .isEqualTo(12.345678);
    }

    @Test
    void cgroupV1UsageInNanoseconds() {
        assertThat(ContainerCpu.parse("2500000000\n")).isEqualTo(2.5);
    }

    @Test
    void nothingReadableIsNamed() {
        assertThatThrownBy(() -> ContainerCpu.parse("cat: no such file\n"))
                .hasMessageContaining("No CPU time").hasMessageContaining("no such file");
    }
}
