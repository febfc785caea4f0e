package dev.offlinepreload.keycloak;

import java.io.IOException;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.deser.std.StringDeserializer;
import com.fasterxml.jackson.databind.type.LogicalType;

/**
 * DATA's string values, each equal value one shared instance: most of them repeat from session to session (the
 * authentication method, the issuer, the client id note, the level of authentication, the state, often the IP address
 * and the device note), and every copy would otherwise stay in the cache as a string of its own, and be copied by every
 * young collection during the load. A value is looked up in a small table indexed by its hash; a different value in
 * its slot replaces it, so the table never grows, holds at most {@code SLOTS} strings of at most {@code MAX_LENGTH}
 * characters. Values that never repeat (timestamps, user names) share nothing and take over their slot, so a common
 * value in that slot gets a fresh instance now and then (about 600 times per million sessions here): a small loss of
 * sharing, never a wrong value. The table is static and keeps its last strings after a load (at most about 2.4 MiB).
 * <p>
 * Each slot also keeps its string's hash, compared before the characters: values that never repeat often meet a
 * value of the same length and a long common prefix in their slot (a timestamp, {@code authenticators-completed}
 * with its ids), and comparing those character by character was 10% of the loader threads' samples on data with
 * per-session times, against 3% on data whose values all repeat.
 * <p>
 * The table's slots are read and written without locks: a {@link String} is immutable and safely published through
 * its final fields, so a read sees null or some string written earlier, complete: the worst case is a lost share. A
 * hash read beside another slot's string only makes a lookup miss or compare the characters in vain.
 */
final class SharedStrings extends StdScalarDeserializer<String> {

    static final int SLOTS = 1 << 13;
    static final int MAX_LENGTH = 256;

    private final String[] slots = new String[SLOTS];
    private final int[] hashes = new int[SLOTS];

    SharedStrings() {
        super(String.class);
    }

    /** The shared instance of {@code value} if the table holds one, else {@code value}, which the table then holds. */
    String share(String value) {
        if (value == null || value.length() > MAX_LENGTH) {
            return value;
        }
        int h = value.hashCode();
        int slot = slot(h);
        String known = slots[slot];
        if (hashes[slot] == h && value.equals(known)) {
            return known;
        }
        hold(slot, h, value);
        return value;
    }

    /**
     * As {@link #share(String)}, for a value still in the parser's buffer: a value the table holds is returned without
     * making a string of it first (no copy to allocate, and for the collector to copy while in flight).
     */
    String share(char[] buffer, int offset, int length) {
        if (length > MAX_LENGTH) {
            return new String(buffer, offset, length);
        }
        int h = 0;
        for (int i = offset; i < offset + length; i++) {
            h = 31 * h + buffer[i]; // String.hashCode's, so both paths find a value in the same slot
        }
        int slot = slot(h);
        String known = slots[slot];
        if (hashes[slot] == h && known != null && equal(known, buffer, offset, length)) {
            return known;
        }
        String value = new String(buffer, offset, length);
        hold(slot, h, value);
        return value;
    }

    private void hold(int slot, int hash, String value) {
        hashes[slot] = hash;
        slots[slot] = value;
    }

    private static int slot(int hash) {
        return (hash ^ (hash >>> 16)) & (SLOTS - 1);
    }

    private static boolean equal(String known, char[] buffer, int offset, int length) {
        if (known.length() != length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (known.charAt(i) != buffer[offset + i]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public LogicalType logicalType() {
        return LogicalType.Textual;
    }

    @Override
    public Object getEmptyValue(DeserializationContext ctxt) {
        return "";
    }

    @Override
    public String deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        // Anything but a plain string (a number or boolean read as text, a coercion error) is Jackson's own handling
        return p.hasToken(JsonToken.VALUE_STRING) ? share(p.getTextCharacters(), p.getTextOffset(), p.getTextLength())
                : share(StringDeserializer.instance.deserialize(p, ctxt));
    }
}
