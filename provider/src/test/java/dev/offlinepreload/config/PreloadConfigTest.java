package dev.offlinepreload.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;

class PreloadConfigTest {

    private static PreloadConfig parse(Map<String, String> values) {
        return PreloadConfig.parse(values::get);
    }

    @Test
    void defaultsApplyWhenNothingIsSet() {
        assertThat(parse(Map.of()).enabled()).isTrue();
    }

    @Test
    void readsBooleansCaseInsensitively() {
        assertThat(parse(Map.of("preload-enabled", "FALSE")).enabled()).isFalse();
        assertThat(parse(Map.of("preload-enabled", " true ")).enabled()).isTrue();
    }

    @Test
    void blankValueMeansDefault() {
        assertThat(parse(Map.of("preload-enabled", "  ")).enabled()).isTrue();
    }

    @Test
    void rejectsATypoInsteadOfReadingItAsFalse() {
        assertThatThrownBy(() -> parse(Map.of("preload-enabled", "ture")))
                .isInstanceOf(InvalidOptionException.class)
                .hasMessageContaining("spi-user-sessions--offline-preload--preload-enabled")
                .hasMessageContaining("'ture'")
                .hasMessageContaining("true or false");
    }

    @Test
    void describesEffectiveValuesByOptionName() {
        assertThat(parse(Map.of("preload-enabled", "false")).describe()).containsEntry("preload-enabled", "false");
    }
}
