package dev.offlinepreload.config;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The provider's effective configuration: parsed and validated once at startup, immutable afterwards.
 *
 * @param enabled whether this node preloads at all
 */
public record PreloadConfig(boolean enabled) {

    /** Used when the configuration is invalid: the node keeps serving, lazily, like stock Keycloak. */
    public static final PreloadConfig DISABLED = new PreloadConfig(false);

    /**
     * @param lookup returns the raw value an operator set for an option key, or null when unset
     * @throws InvalidOptionException naming the first option whose value cannot be used
     */
    public static PreloadConfig parse(Function<String, String> lookup) {
        OptionReader options = new OptionReader(lookup);
        return new PreloadConfig(options.bool(PreloadOption.PRELOAD_ENABLED));
    }

    /** Effective values by option key, for the startup log line and the admin server info. */
    public Map<String, String> describe() {
        Map<String, String> values = new LinkedHashMap<>();
        values.put(PreloadOption.PRELOAD_ENABLED.key(), Boolean.toString(enabled));
        return values;
    }
}
