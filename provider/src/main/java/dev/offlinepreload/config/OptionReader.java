package dev.offlinepreload.config;

import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Reads raw option values, applies defaults and rejects anything that is not exactly a value of the option's type. */
final class OptionReader {

    private final Function<String, String> lookup;

    OptionReader(Function<String, String> lookup) {
        this.lookup = lookup;
    }

    /** The trimmed value, or the option's default when unset or blank (null if it has none). */
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

    /** One of the constants of {@code type}, written in lower case. */
    <E extends Enum<E>> E choice(PreloadOption option, Class<E> type) {
        String value = raw(option);
        E[] constants = type.getEnumConstants();
        for (E constant : constants) {
            if (constant.name().equalsIgnoreCase(value)) {
                return constant;
            }
        }
        String[] names = Arrays.stream(constants).map(c -> c.name().toLowerCase(Locale.ROOT)).toArray(String[]::new);
        throw new InvalidOptionException(option, value, String.join(", ", Arrays.copyOf(names, names.length - 1))
                + " or " + names[names.length - 1]);
    }

    int integer(PreloadOption option, int min, int max) {
        return integer(option, min, max, Integer.parseInt(option.defaultValue()));
    }

    int integer(PreloadOption option, int min, int max, int computedDefault) {
        String value = raw(option);
        if (value == null) {
            return computedDefault;
        }
        String expected = "a whole number from " + min + " to " + max;
        int parsed;
        try {
            parsed = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new InvalidOptionException(option, value, expected);
        }
        if (parsed < min || parsed > max) {
            throw new InvalidOptionException(option, value, expected);
        }
        return parsed;
    }

    /** A comma-separated list; {@code *} (the default) means "all" and yields an empty set. */
    Set<String> nameList(PreloadOption option) {
        String value = raw(option);
        if ("*".equals(value)) {
            return Set.of();
        }
        Set<String> names = Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                .collect(Collectors.toUnmodifiableSet());
        if (names.isEmpty() || names.contains("*")) {
            throw new InvalidOptionException(option, value, "* or a comma-separated list of node names");
        }
        return names;
    }
}
