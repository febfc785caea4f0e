package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SettingsTest {

    @Test
    void jvmOptionsAreNoneUnlessGivenThenEachCommaSeparatedOne() {
        assertThat(Settings.parse(new String[] {"--quick"}).jvmOptions()).isEmpty();
        assertThat(Settings.parse(new String[] {"--quick", "--jvm-options=-XX:+UseParallelGC, -XX:MaxTenuringThreshold=0"})
                .jvmOptions()).containsExactly("-XX:+UseParallelGC", "-XX:MaxTenuringThreshold=0");
    }

    @Test
    void anUnknownOptionNamesTheKnownOnes() {
        assertThatThrownBy(() -> Settings.parse(new String[] {"--jvm-option=-Xmx1g"}))
                .hasMessageContaining("--jvm-option").hasMessageContaining("jvm-options");
    }
}
