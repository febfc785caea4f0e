package dev.offlinepreload.config;

import java.util.Locale;
import java.util.function.Function;

/** Reads raw option values, applies defaults and rejects anything that is not exactly a value of the option's type. */
final class OptionReader {

    private final Function<String, String> lookup;

    OptionReader(Function<String, String> lookup) {
        this.lookup = lookup;
    }

    String raw(PreloadOption option) {
        String value = lookup.apply(option.key());
        return value == null || value.isBlank() ? option.defaultValue() : value.trim();
    }

    boolean bool(PreloadOption option) {
        // Boolean.parseBoolean would read a typo such as "ture" as false and silently switch the feature off.
        String value = raw(option);
        switch (value.toLowerCase(Locale.ROOT)) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new InvalidOptionException(option, value, "true or false");
        }
    }
}
