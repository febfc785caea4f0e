package dev.offlinepreload.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

class LoadStatsTest {

    @Test
    void keepsEveryNthImportedSessionAndAddsUpIntoTheLifetimeCounters() {
        LoadStats lifetime = new LoadStats(null);
        LoadStats pass = new LoadStats(lifetime, 10);
        for (int batch = 0; batch < 5; batch++) {
            int first = batch * 50;
            pass.add(new BatchResult(IntStream.range(first, first + 50).mapToObj(i -> new ImportedSession("s" + i, List.of("app")))
                    .toList(), 50, 0, 0, 0, 0, List.of(), 0));
        }
        assertThat(pass.imported()).isEqualTo(250);
        assertThat(pass.loaded()).isEqualTo(250);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 250; i += 10) {
            expected.add("s" + i);
        }
        assertThat(pass.importedSample()).extracting(ImportedSession::id).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(lifetime.loaded()).isEqualTo(250);
        assertThat(lifetime.importedSample()).as("the lifetime counters keep no sample").isEmpty();
    }

    @Test
    void everySessionIsKeptWhenSampleEveryIsOne() {
        LoadStats pass = new LoadStats(null, 1);
        pass.add(new BatchResult(List.of(new ImportedSession("a", List.of()), new ImportedSession("b", List.of())), 0, 0, 0, 0,
                0, List.of(), 0));
        assertThat(pass.importedSample()).extracting(ImportedSession::id).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void sessionsABatchTookOutAtOnceCountAsRevokedInThePassAndTheLifetime() {
        LoadStats lifetime = new LoadStats(null);
        LoadStats pass = new LoadStats(lifetime, 1);
        pass.add(new BatchResult(List.of(new ImportedSession("a", List.of())), 1, 0, 0, 0, 2, List.of(), 3));
        pass.addRevokedRemoved(4);
        assertThat(pass.revokedRemoved()).as("at once and by the delayed check").isEqualTo(7);
        assertThat(pass.revokedAtOnce()).isEqualTo(3);
        assertThat(lifetime.revokedRemoved()).isEqualTo(7);
        assertThat(lifetime.revokedAtOnce()).isEqualTo(3);
    }

    @Test
    void aSessionOfWhichThisNodePutOnlyClientSessionsCountsItsClientSessionsButNotAsALoadedSession() {
        // Keycloak 26.4: the node holding the session's entry counts the session
        LoadStats pass = new LoadStats(null, 1);
        pass.add(new BatchResult(List.of(new ImportedSession("here", List.of("app-1")),
                new ImportedSession("elsewhere", List.of("app-2", "app-3"), false)), 3, 0, 0, 0, 0, List.of(), 0, 5));
        assertThat(pass.loaded()).isEqualTo(1);
        assertThat(pass.processed()).as("the 5 sessions read for another node's count, this one's loaded").isEqualTo(6);
        assertThat(pass.importedSample()).extracting(ImportedSession::id).containsExactlyInAnyOrder("here", "elsewhere");
    }
}
