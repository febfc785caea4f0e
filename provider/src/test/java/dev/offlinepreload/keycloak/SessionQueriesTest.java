package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

class SessionQueriesTest {

    @Test
    void idListsArePaddedToFourShapesOnly() {
        assertThat(SessionQueries.paddedSize(1)).isEqualTo(1);
        assertThat(SessionQueries.paddedSize(2)).isEqualTo(10);
        assertThat(SessionQueries.paddedSize(10)).isEqualTo(10);
        assertThat(SessionQueries.paddedSize(11)).isEqualTo(100);
        assertThat(SessionQueries.paddedSize(999)).isEqualTo(1000);
        assertThat(SessionQueries.paddedSize(1000)).isEqualTo(1000);
        assertThatThrownBy(() -> SessionQueries.paddedSize(1001)).hasMessageContaining("at most 1000");
    }

    @Test
    void theIdListBecomesSingleParameters() {
        assertThat(SessionQueries.in("select x from X x where x.id in (:ids)", List.of("a", "b", "c")))
                .isEqualTo("select x from X x where x.id in (:id0, :id1, :id2, :id3, :id4, :id5, :id6, :id7, :id8, :id9)");
        assertThat(SessionQueries.in("select x from X x where x.id in (:ids)", List.of("a")))
                .isEqualTo("select x from X x where x.id in (:id0)");
    }
}
