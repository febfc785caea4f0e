package dev.offlinepreload.testsuite.keycloak;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.offlinepreload.testsuite.cluster.KeycloakNode;

/** One scrape of a node's Prometheus endpoint (management port), with look-ups by metric name and labels. */
public final class NodeMetrics {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final String text;

    private NodeMetrics(String text) {
        this.text = text;
    }

    public static NodeMetrics scrape(KeycloakNode node) {
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(node.managementUrl() + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException("metrics of " + node.name() + ": HTTP " + response.statusCode());
            }
            return new NodeMetrics(response.body());
        } catch (IOException e) {
            throw new IllegalStateException("Cannot scrape metrics of " + node.name(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * The value of the first sample of {@code name} whose labels contain every {@code key="value"} given, e.g.
     * {@code value("vendor_statistics_hits", "cache", "offlineSessions")}; NaN if there is none.
     */
    public double value(String name, String... labelPairs) {
        Pattern line = Pattern.compile("^" + Pattern.quote(name) + "(\\{[^}]*})? ([-0-9.eE+NaInf]+)$", Pattern.MULTILINE);
        Matcher m = line.matcher(text);
        while (m.find()) {
            String labels = m.group(1) == null ? "" : m.group(1);
            boolean all = true;
            for (int i = 0; i + 1 < labelPairs.length; i += 2) {
                all &= labels.contains(labelPairs[i] + "=\"" + labelPairs[i + 1] + "\"");
            }
            if (all) {
                return Double.parseDouble(m.group(2));
            }
        }
        return Double.NaN;
    }

    /** Entries of a cache held in this node's memory. */
    public long entries(String cache) {
        return (long) value("vendor_statistics_approximate_entries_in_memory", "cache", cache);
    }

    public long hits(String cache) {
        return (long) value("vendor_statistics_hits", "cache", cache);
    }

    public long misses(String cache) {
        return (long) value("vendor_statistics_misses", "cache", cache);
    }

    /** This provider's counter of sessions by outcome (loaded, skipped, ...). */
    public long preloaded(String outcome) {
        return (long) value("keycloak_offline_preload_sessions_total", "outcome", outcome);
    }

    public boolean preloadState(String state) {
        return value("keycloak_offline_preload_state", "state", state) == 1.0;
    }
}
