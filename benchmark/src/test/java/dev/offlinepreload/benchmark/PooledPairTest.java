package dev.offlinepreload.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PooledPairTest {

    @Test
    void readsACellsSamplesBySetupAndWindowLeavingOutFailedRequests(@TempDir Path dir) throws IOException {
        Path samples = dir.resolve("cell-samples.csv.gz");
        try (Writer out = new OutputStreamWriter(new GZIPOutputStream(Files.newOutputStream(samples)), StandardCharsets.UTF_8)) {
            out.write("setup,due_ms,latency_ms,failed\n"
                    + "\"with this provider, defaults #1\",100.0,250.5,false\n"
                    + "\"with this provider, defaults #1\",10500.0,40.0,false\n"
                    + "\"with this provider, defaults #1\",10600.0,9000.0,true\n"
                    + "\"with this provider, preloading=false #2\",9999.9,30.0,false\n");
        }
        Map<String, Map<Integer, List<Double>>> runs = PooledPair.read(samples);
        assertThat(runs).containsOnlyKeys("with this provider, defaults #1", "with this provider, preloading=false #2");
        assertThat(runs.get("with this provider, defaults #1")).containsEntry(0, List.of(250.5)).containsEntry(1, List.of(40.0));
        assertThat(runs.get("with this provider, preloading=false #2")).containsOnlyKeys(0);
    }
}
