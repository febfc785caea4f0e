package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class SharedStringsTest {

    private final SharedStrings strings = new SharedStrings();

    @Test
    void anEqualValueIsTheFirstInstance() {
        String first = new String("openid-connect");
        assertThat(strings.share(first)).isSameAs(first);
        assertThat(strings.share(new String("openid-connect"))).isSameAs(first);
    }

    @Test
    void everyValueComesBackEqualWhateverTheTableHolds() {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < SharedStrings.SLOTS * 4; i++) {
            values.add("value-" + i); // more values than slots: slots are taken over again and again
        }
        for (int round = 0; round < 2; round++) {
            for (String value : values) {
                assertThat(strings.share(new String(value))).isEqualTo(value);
            }
        }
        assertThat(strings.share(null)).isNull();
    }

    @Test
    void longValuesAreNotHeld() {
        String tooLong = "x".repeat(SharedStrings.MAX_LENGTH + 1);
        strings.share(tooLong);
        String again = new String(tooLong);
        assertThat(strings.share(again)).isSameAs(again);
    }
}
