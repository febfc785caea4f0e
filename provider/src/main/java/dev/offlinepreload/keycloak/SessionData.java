package dev.offlinepreload.keycloak;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.sql.ResultSet;
import java.sql.SQLException;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.module.SimpleModule;
import org.keycloak.models.session.PersistentAuthenticatedClientSessionAdapter;
import org.keycloak.models.session.PersistentUserSessionAdapter;
import org.keycloak.util.JsonSerialization;

/**
 * A session row's DATA column (its JSON), and how it reaches Keycloak's adapters. Keycloak's adapters parse DATA
 * lazily from the row's string with {@code JsonSerialization.readValue(String, Class)}; the loader parses it with
 * the same mapper and into the same classes, but from the UTF-8 bytes where the driver hands them out unconverted
 * (PostgreSQL), through a reader resolved once, and sets the result where the adapter's lazy parse would have put
 * it. Profile of a 1M load: Jackson was a quarter of the loader's CPU, and DATA decoded into strings a tenth of
 * everything it allocated. Equal string values share one instance in the cache ({@link SharedStrings}).
 *
 * @param utf8 the column's bytes, UTF-8 (PostgreSQL), or null
 * @param text the column as a string (other databases), or null
 */
record SessionData(byte[] utf8, String text) {

    private static final Class<?> USER_DATA = nested(PersistentUserSessionAdapter.class, "PersistentUserSessionData");
    private static final Class<?> CLIENT_DATA = nested(PersistentAuthenticatedClientSessionAdapter.class, "PersistentClientSessionData");
    /**
     * Keycloak's mapper, each equal string value read as one instance ({@link SharedStrings}), each string map into a
     * sized {@code HashMap} ({@link NoteMaps}).
     */
    private static final ObjectMapper MAPPER = JsonSerialization.mapper.copy().registerModule(dataModule());
    private static final ObjectReader USER_READER = MAPPER.readerFor(USER_DATA);
    private static final ObjectReader CLIENT_READER = MAPPER.readerFor(CLIENT_DATA);
    private static final VarHandle USER_FIELD = dataField(PersistentUserSessionAdapter.class, USER_DATA);
    private static final VarHandle CLIENT_FIELD = dataField(PersistentAuthenticatedClientSessionAdapter.class, CLIENT_DATA);

    /**
     * @param utf8 whether the driver returns a text column's bytes unconverted, in UTF-8 ({@code getBytes}); else
     *             the column is read as a string
     */
    static SessionData read(ResultSet rs, int column, boolean utf8) throws SQLException {
        return utf8 ? new SessionData(rs.getBytes(column), null) : new SessionData(null, rs.getString(column));
    }

    /**
     * Parses DATA into the adapter, exactly where its own lazy parse would.
     *
     * @throws IOException if DATA is not the session JSON Keycloak writes (or is null)
     */
    void parseInto(PersistentUserSessionAdapter adapter) throws IOException {
        USER_FIELD.set(adapter, parse(USER_READER));
    }

    /** As {@link #parseInto(PersistentUserSessionAdapter)}, for a client session. */
    void parseInto(PersistentAuthenticatedClientSessionAdapter adapter) throws IOException {
        CLIENT_FIELD.set(adapter, parse(CLIENT_READER));
    }

    private Object parse(ObjectReader reader) throws IOException {
        Object value = utf8 != null ? reader.readValue(utf8) : text != null ? reader.readValue(text) : null;
        if (value == null) {
            throw new IOException("DATA is empty");
        }
        return value;
    }

    private static SimpleModule dataModule() {
        SimpleModule module = new SimpleModule("offline-preload-data");
        module.setDeserializers(NoteMaps.deserializers(new SharedStrings()));
        return module;
    }

    private static Class<?> nested(Class<?> outer, String name) {
        try {
            return Class.forName(outer.getName() + "$" + name, false, outer.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw incompatible(outer, e);
        }
    }

    private static VarHandle dataField(Class<?> adapter, Class<?> type) {
        try {
            return MethodHandles.privateLookupIn(adapter, MethodHandles.lookup()).findVarHandle(adapter, "data", type);
        } catch (ReflectiveOperationException e) {
            throw incompatible(adapter, e);
        }
    }

    private static IllegalStateException incompatible(Class<?> adapter, Exception e) {
        return new IllegalStateException(adapter.getName() + " does not keep its parsed DATA as this jar expects: this jar "
                + "does not match this Keycloak version", e);
    }
}
