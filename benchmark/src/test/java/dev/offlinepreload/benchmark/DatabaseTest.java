package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DatabaseTest {

    @Test
    void cgroupV2CpuStatInMicroseconds() {
        assertThat(Database.cgroupCpuSeconds("usage_usec 12345678\nuser_usec 10000000\nsystem_usec 2345678\n"))
                .isEqualTo(12.345678);
    }

    @Test
    void cgroupV1UsageInNanoseconds() {
        assertThat(Database.cgroupCpuSeconds("2500000000\n")).isEqualTo(2.5);
    }

    @Test
    void nothingReadableIsNamed() {
        assertThatThrownBy(() -> Database.cgroupCpuSeconds("cat: no such file\n"))
                .hasMessageContaining("No CPU time").hasMessageContaining("no such file");
    }
}
