package dev.offlinepreload.keycloak;

import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.KeyDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.jsontype.TypeDeserializer;
import com.fasterxml.jackson.databind.module.SimpleDeserializers;
import com.fasterxml.jackson.databind.type.MapType;

/**
 * DATA's string maps (a session's and a client session's notes), read straight into the {@link HashMap} the cache
 * entry keeps, sized for its entries as {@code new HashMap<>(map)} sizes it. Jackson's own map deserializer builds a
 * {@code LinkedHashMap} with a 16-slot table, which the loader used to copy into a sized map: the copy saved 110 MiB
 * of cached heap per 1M sessions, but the map it came from was 8% of everything the loader threads allocated (JFR, 1M
 * load). Values are read as every other string value ({@link SharedStrings}); a null value stays null, and a value
 * that is not a string is Jackson's to coerce or refuse, as in the map it replaces.
 */
final class NoteMaps extends StdDeserializer<Map<String, String>> {

    private final SharedStrings strings;

    NoteMaps(SharedStrings strings) {
        super(Map.class);
        this.strings = strings;
    }

    /** Jackson's lookup of deserializers: this one for every {@code Map<String, String>}, and {@code strings}. */
    static SimpleDeserializers deserializers(SharedStrings strings) {
        NoteMaps maps = new NoteMaps(strings);
        SimpleDeserializers deserializers = new SimpleDeserializers() {
            @Override
            public JsonDeserializer<?> findMapDeserializer(MapType type, DeserializationConfig config, BeanDescription beanDesc,
                                                           KeyDeserializer keyDeserializer, TypeDeserializer elementTypeDeserializer,
                                                           JsonDeserializer<?> elementDeserializer) {
                return type.getKeyType().hasRawClass(String.class) && type.getContentType().hasRawClass(String.class) ? maps : null;
            }
        };
        deserializers.addDeserializer(String.class, strings);
        return deserializers;
    }

    @Override
    public Map<String, String> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        JsonToken token = p.currentToken();
        if (token == JsonToken.START_OBJECT) {
            token = p.nextToken();
        } else if (token != JsonToken.FIELD_NAME && token != JsonToken.END_OBJECT) {
            @SuppressWarnings("unchecked")
            Map<String, String> refused = (Map<String, String>) ctxt.handleUnexpectedToken(Map.class, p);
            return refused;
        }
        String[] entries = new String[16];
        int n = 0;
        for (; token == JsonToken.FIELD_NAME; token = p.nextToken()) {
            String key = p.currentName();
            String value = p.nextToken() == JsonToken.VALUE_NULL ? null : strings.deserialize(p, ctxt);
            if (n == entries.length) {
                entries = Arrays.copyOf(entries, n * 2);
            }
            entries[n++] = key;
            entries[n++] = value;
        }
        Map<String, String> map = new HashMap<>((int) (n / 2 / 0.75f + 1.0f));
        for (int i = 0; i < n; i += 2) {
            map.put(entries[i], entries[i + 1]);
        }
        return map;
    }
}
