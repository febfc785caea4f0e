package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RestartWindowTest {

    @Test
    void theMedianOfTheRepeatsIgnoresWindowsWithoutRequests() {
        assertThat(RestartWindow.median(List.of(5.0, 1.0, 3.0))).isEqualTo(3.0);
        assertThat(RestartWindow.median(List.of(4.0, 1.0))).isEqualTo(2.5);
        assertThat(RestartWindow.median(List.of(Double.NaN, 7.0))).isEqualTo(7.0);
        assertThat(RestartWindow.median(List.of())).isNaN();
    }

    @Test
    void eachRepeatBeginsOneSetupLaterSoThatEverySetupTakesEveryPlaceOnce() {
        List<String> setups = List.of("stock", "defaults", "off");
        assertThat(RestartWindow.order(setups, 1)).containsExactly("stock", "defaults", "off");
        assertThat(RestartWindow.order(setups, 2)).containsExactly("defaults", "off", "stock");
        assertThat(RestartWindow.order(setups, 3)).containsExactly("off", "stock", "defaults");
        assertThat(RestartWindow.order(setups, 4)).containsExactly("stock", "defaults", "off");
        assertThat(RestartWindow.order(List.of("stock", "defaults"), 2)).as("two setups alternate")
                .containsExactly("defaults", "stock");
        assertThat(setups).as("the settings' list is left as it is").containsExactly("stock", "defaults", "off");
    }

    @Test
    void steadyStateStartsAfterTheLastWindowAboveOneAndAHalfTimesTheCellsBestTailPlus50Ms() {
        List<Double> drained = List.of(5000.0, 900.0, 100.0, 200.0, 130.0, 60.0, 50.0, 70.0);
        List<Double> neverDrained = List.of(14_000.0, 19_000.0, 23_000.0, 20_000.0, 16_000.0);
        double level = RestartWindow.steadyLevel(List.of(drained, neverDrained));
        assertThat(level).as("the lowest tail median of the cell's runs").isEqualTo(60.0);
        // bound 140 ms: the 200 ms of window 3 is the last above it
        assertThat(RestartWindow.steadyFrom(drained, level)).isEqualTo(4);
        assertThat(RestartWindow.steadyFrom(neverDrained, level)).as("a backlog that never drained").isEqualTo(-1);
        assertThat(RestartWindow.steadyFrom(List.of(80.0, 60.0, 50.0, 70.0), level)).isZero();
        // a late spike counts: the backlog had not drained for good
        assertThat(RestartWindow.steadyFrom(List.of(80.0, 60.0, 50.0, 70.0, 900.0, 60.0, 60.0, 60.0), level)).isEqualTo(5);
        assertThat(RestartWindow.steadyFrom(List.of(Double.NaN, Double.NaN), Double.NaN)).isEqualTo(-1);
    }

    @Test
    void againstStockCountsTheWindowsWithin10PercentOr50MsAndSaysWhetherStocksOwnRunsReachedTheOthers() {
        List<Double> stock = List.of(4000.0, 300.0, 40.0, Double.NaN);
        List<Double> stockHighest = List.of(5100.0, 320.0, 45.0, Double.NaN);
        // 4.4 s is 10% above 4.0 s; 89 ms is within 50 ms of 40 ms; the window without stock's figure does not count
        assertThat(RestartWindow.againstStock(stock, stockHighest, List.of(4400.0, 200.0, 89.0, 10.0))).isEqualTo("3 of 3");
        assertThat(RestartWindow.againstStock(stock, stockHighest, List.of(4600.0, 360.0, 20.0, 10.0)))
                .isEqualTo("1 of 3; above: 0–10 s (one of stock's runs reached 5.1 s), 10–20 s (above every run of stock's)");
    }

    @Test
    void theLoadersRatePerWindowInterpolatesBetweenPolls() {
        List<RestartWindow.Loaded> polls = List.of(new RestartWindow.Loaded(0, 1000), new RestartWindow.Loaded(5, 1000),
                new RestartWindow.Loaded(15, 21_000), new RestartWindow.Loaded(25, 21_000));
        // 0-10 s: 1,000 -> 11,000 (halfway between the polls at 5 and 15 s); 10-20 s: 11,000 -> 21,000; then idle,
        // and after the last poll the total stays where it was
        assertThat(RestartWindow.loadRates(polls, 4)).containsExactly(1000.0, 1000.0, 0.0, 0.0);
        assertThat(RestartWindow.loadRates(List.of(), 2)).containsExactly(0.0, 0.0);
    }

    @Test
    void theSummaryGathersEveryCellMeasuredWithTheSameSettingsWhicheverRunMeasuredIt(@TempDir Path cells) throws IOException {
        String settings = "<!-- 3 nodes, 1000000 sessions, 3 repeats -->";
        Files.writeString(cells.resolve("volatile-refresh-10rps.md"), settings + "\n### volatile\n![c](volatile-refresh-10rps.png)");
        Files.writeString(cells.resolve("persistent-refresh-40rps-most.md"), settings + "\n### persistent, an earlier run");
        Files.writeString(cells.resolve("persistent-refresh-10rps.md"), "<!-- 1 repeats -->\n### measured otherwise");
        Files.writeString(cells.resolve("volatile-refresh-10rps.png"), "not a cell");

        String all = RestartWindow.gathered(cells, settings);

        assertThat(all).contains("### persistent, an earlier run", "![c](restart-window/volatile-refresh-10rps.png)")
                .doesNotContain("measured otherwise", "not a cell", settings);
        assertThat(all.indexOf("### persistent")).isLessThan(all.indexOf("### volatile"));
    }
}
