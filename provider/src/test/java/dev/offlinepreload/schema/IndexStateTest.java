package dev.offlinepreload.schema;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import dev.offlinepreload.schema.IndexState.IndexWork;
import dev.offlinepreload.schema.IndexState.Presence;
import org.junit.jupiter.api.Test;

class IndexStateTest {

    private static final OfflineIndex REFRESH = OfflineIndex.ALL.get(0);
    private static final OfflineIndex CREATED = OfflineIndex.ALL.get(1);

    private static IndexState state(Presence refresh, Presence created, String... recorded) {
        Map<OfflineIndex, Presence> presence = new LinkedHashMap<>();
        presence.put(REFRESH, refresh);
        presence.put(CREATED, created);
        return new IndexState(presence, Set.of(recorded));
    }

    @Test
    void nothingToDoWhenEveryIndexIsValidAndRecorded() {
        assertThat(state(Presence.VALID, Presence.VALID, REFRESH.changesetId(), CREATED.changesetId()).work()).isEmpty();
    }

    @Test
    void buildsWhatIsMissingAndRecordsIt() {
        assertThat(state(Presence.MISSING, Presence.VALID, CREATED.changesetId()).work())
                .containsExactly(new IndexWork(REFRESH, false, true, true));
    }

    @Test
    void dropsAnInvalidLeftoverBeforeBuildingAgain() {
        assertThat(state(Presence.VALID, Presence.INVALID, REFRESH.changesetId()).work())
                .containsExactly(new IndexWork(CREATED, true, true, true));
    }

    @Test
    void onlyRecordsAnIndexSomeoneElseBuilt() {
        // e.g. a DBA ran the logged SQL, or the building node died after its build completed
        assertThat(state(Presence.VALID, Presence.VALID).work())
                .containsExactly(new IndexWork(REFRESH, false, false, true), new IndexWork(CREATED, false, false, true));
    }

    @Test
    void rebuildsAnIndexDroppedAfterItsChangesetRan() {
        assertThat(state(Presence.MISSING, Presence.VALID, REFRESH.changesetId(), CREATED.changesetId()).work())
                .containsExactly(new IndexWork(REFRESH, false, true, false));
    }
}
