package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;

import dev.offlinepreload.keycloak.KeycloakMinor.EntryExpiry;
import org.junit.jupiter.api.Test;

class KeycloakMinorTest {

    @Test
    void theMinorIsReadFromEveryFormOfVersion() {
        assertThat(KeycloakMinor.of("26.5.6")).isEqualTo(new KeycloakMinor(26, 5));
        assertThat(KeycloakMinor.of("26.7.4.redhat-00001")).isEqualTo(new KeycloakMinor(26, 7));
        assertThat(KeycloakMinor.of("26.6.0-SNAPSHOT")).isEqualTo(new KeycloakMinor(26, 6));
        assertThat(KeycloakMinor.of("999-SNAPSHOT").toString()).as("unreadable: the newest").isEqualTo(Integer.MAX_VALUE + ".0");
    }

    @Test
    void rememberMeHasAColumnFrom26_5() {
        assertThat(KeycloakMinor.of("26.4.7").hasRememberMeColumn()).isFalse();
        assertThat(KeycloakMinor.of("26.5.6").hasRememberMeColumn()).isTrue();
        assertThat(KeycloakMinor.of("26.7.4").hasRememberMeColumn()).isTrue();
    }

    /** As Keycloak's import writes a persistent-mode entry: lifespan and max-idle before 26.6, the earlier one after. */
    @Test
    void theEntryExpiryFollowsTheMinor() {
        assertThat(KeycloakMinor.of("26.5.6").expiry(60_000, 30_000)).isEqualTo(new EntryExpiry(60_000, 30_000));
        assertThat(KeycloakMinor.of("26.6.4").expiry(60_000, 30_000)).isEqualTo(new EntryExpiry(30_000, EntryExpiry.NONE));
        assertThat(KeycloakMinor.of("26.7.4").expiry(60_000, 90_000)).isEqualTo(new EntryExpiry(60_000, EntryExpiry.NONE));
        assertThat(KeycloakMinor.of("26.7.4").expiry(-1, 90_000)).as("no lifespan").isEqualTo(new EntryExpiry(90_000, EntryExpiry.NONE));
    }
}
