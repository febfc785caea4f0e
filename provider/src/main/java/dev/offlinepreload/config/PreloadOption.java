package dev.offlinepreload.config;

/**
 * Every option of this provider. An operator sets {@code name} as
 * {@code spi-user-sessions--offline-preload--<name>} in keycloak.conf or
 * {@code KC_SPI_USER_SESSIONS__OFFLINE_PRELOAD__<NAME>} in the environment.
 */
public enum PreloadOption {

    PRELOAD_ENABLED("preload-enabled", "boolean", "true",
            "Load offline sessions from the database into the caches after startup. (Keycloak's own build-time option \"enabled\" switches the whole provider on or off.)");

    private final String key;
    private final String type;
    private final String defaultValue;
    private final String helpText;

    PreloadOption(String key, String type, String defaultValue, String helpText) {
        this.key = key;
        this.type = type;
        this.defaultValue = defaultValue;
        this.helpText = helpText;
    }

    /** The kebab-case name inside the provider's config scope. */
    public String key() {
        return key;
    }

    public String type() {
        return type;
    }

    public String defaultValue() {
        return defaultValue;
    }

    public String helpText() {
        return helpText;
    }

    /** How an operator writes it in keycloak.conf; used in every error message. */
    public String confName() {
        return "spi-user-sessions--offline-preload--" + key;
    }
}
