package dev.offlinepreload.config;

/** A configuration value that cannot be used; the message names the option, the value and what is allowed. */
public class InvalidOptionException extends RuntimeException {

    public InvalidOptionException(PreloadOption option, String value, String expected) {
        super("Invalid value '" + value + "' for option " + option.confName() + ": expected " + expected);
    }
}
