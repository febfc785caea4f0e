package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettingsTest {

    @Test
    void providerOptionsAreNoneUnlessGivenThenEachOptionValuePairInOrder() {
        assertThat(Settings.parse(new String[] {"--quick"}).providerOptions()).isEmpty();
        assertThat(Settings.parse(new String[] {"--provider-options=quiet-start-seconds=0, batch-size=2000"})
                .providerOptions()).containsExactly(Map.entry("quiet-start-seconds", "0"), Map.entry("batch-size", "2000"));
        assertThatThrownBy(() -> Settings.parse(new String[] {"--provider-options=quiet-start-seconds"}))
                .hasMessageContaining("option=value").hasMessageContaining("'quiet-start-seconds'");
    }

    @Test
    void jvmOptionsAreNoneUnlessGivenThenEachCommaSeparatedOne() {
        assertThat(Settings.parse(new String[] {"--quick"}).jvmOptions()).isEmpty();
        assertThat(Settings.parse(new String[] {"--quick", "--jvm-options=-XX:+UseParallelGC, -XX:MaxTenuringThreshold=0"})
                .jvmOptions()).containsExactly("-XX:+UseParallelGC", "-XX:MaxTenuringThreshold=0");
    }

    @Test
    void anotherCollectorIsOneThatIsNotG1() {
        assertThat(Settings.parse(new String[] {"--quick"}).otherCollector()).isNull();
        assertThat(Settings.parse(new String[] {"--jvm-options=-XX:+UseG1GC,-XX:MaxGCPauseMillis=500"}).otherCollector()).isNull();
        assertThat(Settings.parse(new String[] {"--jvm-options=-XX:MaxTenuringThreshold=0"}).otherCollector()).isNull();
        assertThat(Settings.parse(new String[] {"--jvm-options=-Xss1m,-XX:+UseParallelGC"}).otherCollector())
                .isEqualTo("-XX:+UseParallelGC");
    }

    @Test
    void anUnknownOptionNamesTheKnownOnes() {
        assertThatThrownBy(() -> Settings.parse(new String[] {"--jvm-option=-Xmx1g"}))
                .hasMessageContaining("--jvm-option").hasMessageContaining("jvm-options");
    }

    @Test
    void planningRunsOnlyWhenAskedWithOneAndTenMillionByDefault() {
        Settings defaults = Settings.parse(new String[0]);
        assertThat(defaults.runs("planning")).isFalse();
        assertThat(defaults.planningSizes()).containsExactly(1_000_000, 10_000_000);
        assertThat(defaults.planningMaxCount()).isEqualTo(1_000_000);
        Settings planning = Settings.parse(new String[] {"--phases=planning", "--planning-sizes=1000000,5000000",
                "--planning-max-count=500000"});
        assertThat(planning.runs("planning")).isTrue();
        assertThat(planning.runs("ours")).isFalse();
        assertThat(planning.planningSizes()).containsExactly(1_000_000, 5_000_000);
        assertThat(planning.planningMaxCount()).isEqualTo(500_000);
    }

    @Test
    void theNoTrafficPairRunsOnceUnlessMorePairsAreAsked() {
        assertThat(Settings.parse(new String[] {"--quick"}).noTrafficPairs()).isEqualTo(1);
        assertThat(Settings.parse(new String[] {"--quick", "--no-traffic-pairs=4"}).noTrafficPairs()).isEqualTo(4);
        assertThat(Report.pairNote(2, false)).isEqualTo("adaptive-load=false, no-traffic pair 2");
        assertThat(Report.pairNote(3, true)).isEqualTo("no-traffic pair 3");
    }

    @Test
    void theWindowMatrixTakesRatesAsAListAndTheFixedCapAmongTheSetups() {
        Settings defaults = Settings.parse(new String[0]);
        assertThat(defaults.windowRates()).containsExactly(40);
        assertThat(defaults.windowSetups()).containsExactly("stock", "defaults", "uncapped", "fixed");
        assertThat(defaults.windowCap()).isEqualTo(RefreshLatency.RATE_CAP);
        assertThat(defaults.windowTrafficDelay()).isZero();
        assertThat(defaults.windowWarmups()).isZero();
        Settings two = Settings.parse(new String[] {"--phases=window", "--window-rates=20,120", "--window-cap=5000",
                "--window-traffic-delay=8", "--window-warmups=1"});
        assertThat(two.windowRates()).containsExactly(20, 120);
        assertThat(two.windowCap()).isEqualTo(5000);
        assertThat(two.windowTrafficDelay()).isEqualTo(8);
        assertThat(two.windowWarmups()).isEqualTo(1);
        assertThat(Settings.parse(new String[] {"--window-setups=stock-here,defaults"}).windowSetups())
                .containsExactly("stock-here", "defaults");
        assertThat(Settings.parse(new String[] {"--window-setups=stock-indexed,off"}).windowSetups())
                .containsExactly("stock-indexed", "off");
    }

    @Test
    void theWindowSpreadsAreFewAndMostByDefaultAndNothingElse() {
        assertThat(Settings.parse(new String[0]).windowSpreads()).containsExactly("few", "most");
        assertThat(Settings.parse(new String[] {"--window-spread=most"}).windowSpreads()).containsExactly("most");
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-spread=all"}))
                .hasMessageContaining("'all'").hasMessageContaining("few, most");
    }

    @Test
    void theWindowMixesAreRefreshAndIntrospectionByDefaultAndUserinfoOnRequestAndNoOptionTakesATypo() {
        assertThat(Settings.parse(new String[0]).windowMixes()).containsExactly("refresh", "introspection");
        assertThat(Settings.parse(new String[] {"--window-mixes=read-heavy,refresh"}).windowMixes())
                .containsExactly("read-heavy", "refresh");
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-mixes=refresh,introspect"}))
                .hasMessageContaining("--window-mixes").hasMessageContaining("'introspect'")
                .hasMessageContaining("refresh, read-heavy, introspection");
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-modes=volatil"})).hasMessageContaining("'volatil'");
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-setups=stock,capped"})).hasMessageContaining("'capped'");
    }

    @Test
    void aProviderSetupTakesItsOwnOptionsAndStockTakesNone() {
        Settings settings = Settings.parse(new String[] {"--window-setups=stock-here,defaults,defaults+hold-readiness=false+batch-size=500"});
        assertThat(settings.windowSetups()).containsExactly("stock-here", "defaults", "defaults+hold-readiness=false+batch-size=500");
        assertThat(Settings.setupBase("defaults+hold-readiness=false+batch-size=500")).isEqualTo("defaults");
        assertThat(Settings.setupOptions("defaults+hold-readiness=false+batch-size=500"))
                .containsExactly(entry("hold-readiness", "false"), entry("batch-size", "500"));
        assertThat(Settings.setupOptions("defaults")).isEmpty();
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-setups=stock-here+hold-readiness=false,defaults"}))
                .hasMessageContaining("'stock-here+hold-readiness=false'").hasMessageContaining("stock");
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-setups=defualts+hold-readiness=false"}))
                .hasMessageContaining("'defualts'");
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-setups=defaults+hold-readiness"}))
                .hasMessageContaining("option=value").hasMessageContaining("'hold-readiness'");
    }

    @Test
    void theBaselineSetupRunsTheJarNamedForItAndOnlyThen(@TempDir Path dir) throws IOException {
        Path jar = Files.createFile(dir.resolve("preloader-3d9edb7.jar"));
        Settings settings = Settings.parse(new String[] {"--window-setups=defaults,baseline,baseline+hot-window-seconds=0",
                "--window-baseline-jar=" + jar});
        assertThat(settings.windowSetups()).containsExactly("defaults", "baseline", "baseline+hot-window-seconds=0");
        assertThat(settings.windowBaselineJar()).contains(jar.toAbsolutePath());
        assertThat(Settings.parse(new String[0]).windowBaselineJar()).isEmpty();
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-setups=defaults,baseline"}))
                .hasMessageContaining("'baseline'").hasMessageContaining("--window-baseline-jar=PATH");
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-setups=defaults,baseline",
                "--window-baseline-jar=" + dir.resolve("missing.jar")})).hasMessageContaining("missing.jar");
        assertThatThrownBy(() -> Settings.parse(new String[] {"--window-setups=defaults", "--window-baseline-jar=" + jar}))
                .hasMessageContaining("does not name");
    }
}
