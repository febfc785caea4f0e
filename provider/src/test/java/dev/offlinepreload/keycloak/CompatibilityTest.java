package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CompatibilityTest {

    @Test
    void anotherMinorIsNamedWithTheSupportedRange() {
        assertThat(Compatibility.whyNotSupported("26.8.0", true))
                .isEqualTo("this is Keycloak 26.8.0 and this jar supports Keycloak 26.4.x, 26.5.x, 26.6.x and 26.7.x; install the release of this "
                        + "provider that supports Keycloak 26.8 (README, Compatibility), or none");
        assertThat(Compatibility.whyNotSupported("26.3.5", true)).startsWith("this is Keycloak 26.3.5 and");
        assertThat(Compatibility.whyNotSupported("27.0.0", true)).startsWith("this is Keycloak 27.0.0 and");
    }

    @Test
    void everyPatchOfASupportedMinorGoesIn() {
        assertThat(Compatibility.whyNotSupported("26.7.4", true)).isNull();
        assertThat(Compatibility.whyNotSupported("26.7.9", true)).isNull();
        assertThat(Compatibility.whyNotSupported("26.7.4.redhat-00001", true)).isNull();
        assertThat(Compatibility.whyNotSupported("26.7.5-SNAPSHOT", true)).isNull();
        assertThat(Compatibility.whyNotSupported("26.5.6", true)).isNull();
        assertThat(Compatibility.whyNotSupported("26.5.6.redhat-00002", true)).isNull();
        assertThat(Compatibility.whyNotSupported("26.6.4.redhat-00001", true)).isNull();
        assertThat(Compatibility.whyNotSupported("26.4.7", true)).isNull();
    }

    @Test
    void aDisabledBuiltInProviderKeepsTheJarOut() {
        assertThat(Compatibility.whyNotSupported("26.7.4", false)).contains("spi-user-sessions--infinispan--enabled=false");
    }
}
