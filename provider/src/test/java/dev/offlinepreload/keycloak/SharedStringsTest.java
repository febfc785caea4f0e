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
    void aValueInTheParsersBufferIsTheInstanceTheTableHolds() {
        String first = strings.share(new String("openid-connect"));
        char[] buffer = "{\"authMethod\":\"openid-connect\"}".toCharArray();
        assertThat(strings.share(buffer, 15, 14)).isSameAs(first);
        char[] other = "openid-connecx".toCharArray(); // same length, other value: its own instance, then held
        String otherValue = strings.share(other, 0, other.length);
        assertThat(otherValue).isEqualTo("openid-connecx");
        assertThat(strings.share(new String("openid-connecx"))).isSameAs(otherValue);
        assertThat(strings.share(new char[0], 0, 0)).isEmpty();
    }

    @Test
    void valuesFromTheBufferComeBackEqualWhateverTheTableHolds() {
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < SharedStrings.SLOTS * 4; i++) {
                char[] buffer = ("[value-" + i + "]").toCharArray();
                assertThat(strings.share(buffer, 1, buffer.length - 2)).isEqualTo("value-" + i);
            }
        }
    }

    @Test
    void valuesWithTheSameHashStayApart() {
        assertThat("Aa".hashCode()).isEqualTo("BB".hashCode());
        String aa = strings.share(new String("Aa"));
        assertThat(strings.share(new String("BB"))).isEqualTo("BB");
        char[] buffer = "Aa".toCharArray();
        assertThat(strings.share(buffer, 0, 2)).isEqualTo("Aa");
        assertThat(strings.share(new String("Aa"))).isEqualTo("Aa").isNotSameAs(aa); // the slot held BB meanwhile
    }

    @Test
    void longValuesAreNotHeld() {
        String tooLong = "x".repeat(SharedStrings.MAX_LENGTH + 1);
        strings.share(tooLong);
        String again = new String(tooLong);
        assertThat(strings.share(again)).isSameAs(again);
        char[] buffer = tooLong.toCharArray();
        assertThat(strings.share(buffer, 0, buffer.length)).isEqualTo(tooLong).isNotSameAs(tooLong);
    }
}
