package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

class SessionQueriesTest {

    @Test
    void idListsArePaddedToFewShapesAndAtMostTwiceTheIds() {
        assertThat(SessionQueries.paddedSize(1)).isEqualTo(1);
        assertThat(SessionQueries.paddedSize(3)).isEqualTo(4);
        assertThat(SessionQueries.paddedSize(64)).isEqualTo(64);
        assertThat(SessionQueries.paddedSize(65)).isEqualTo(128);
        assertThat(SessionQueries.paddedSize(513)).isEqualTo(1000);
        assertThat(SessionQueries.paddedSize(999)).isEqualTo(1000);
        assertThat(SessionQueries.paddedSize(1000)).isEqualTo(1000);
        assertThatThrownBy(() -> SessionQueries.paddedSize(1001)).hasMessageContaining("at most 1000");
    }

    @Test
    void theIdListBecomesPaddedPlaceholders() {
        assertThat(SessionQueries.in("SELECT ID FROM X WHERE ID IN (?)", List.of("a", "b", "c")))
                .isEqualTo("SELECT ID FROM X WHERE ID IN (?, ?, ?, ?)");
        assertThat(SessionQueries.in("SELECT ID FROM X WHERE ID IN (?)", List.of("a")))
                .isEqualTo("SELECT ID FROM X WHERE ID IN (?)");
    }
}
