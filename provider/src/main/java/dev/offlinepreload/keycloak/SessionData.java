package dev.offlinepreload.keycloak;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.function.IntConsumer;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.base.ParserBase;
import com.fasterxml.jackson.databind.MappingIterator;
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
 * <p>
 * A batch's rows are parsed ahead with one parser for all of them ({@link #parseUserSessions},
 * {@link #parseClientSessions}): a parser and its deserialization context per value were a sixth of what the loader
 * threads allocated and 5% of their CPU (JFR, 1M load). A row whose value that parser cannot tell apart from its
 * neighbours' (corrupt, empty, or more than one value) is left to a parse of its own, which says what is wrong with it.
 * <p>
 * Not thread-safe: a row's DATA belongs to the one batch that reads it.
 */
final class SessionData {

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

    /** The column's bytes, UTF-8 (PostgreSQL), or null. */
    private final byte[] utf8;
    /** The column as a string (other databases), or null. */
    private final String text;
    /** The value parsed ahead with the batch's other rows, or null. */
    private Object parsed;

    SessionData(byte[] utf8, String text) {
        this.utf8 = utf8;
        this.text = text;
    }

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
        if (parsed != null) {
            return parsed;
        }
        Object value = utf8 != null ? reader.readValue(utf8) : text != null ? reader.readValue(text) : null;
        if (value == null) {
            throw new IOException("DATA is empty");
        }
        return value;
    }

    /** Parses the rows' DATA ahead, as user sessions' (see the class comment). */
    static void parseUserSessions(List<SessionData> rows) {
        parseAhead(rows, USER_READER);
    }

    /** Parses the rows' DATA ahead, as client sessions'. */
    static void parseClientSessions(List<SessionData> rows) {
        parseAhead(rows, CLIENT_READER);
    }

    private static void parseAhead(List<SessionData> rows, ObjectReader reader) {
        boolean bytes = rows.stream().noneMatch(row -> row.text != null);
        for (int next = 0; next < rows.size(); ) {
            next = parseAhead(rows, next, reader, bytes) + 1;
        }
    }

    /**
     * Reads the rows from {@code from} on as one stream of values, each row followed by a space, and keeps each
     * row's value if it is that row's alone: its first token starts in the row (the previous value ended before it),
     * its last token (the closing brace) too, and the next value starts after it. A token that ran from one row
     * into the next (a string, the only token a space does not end) makes the value end outside its row. Stops at
     * the first row it cannot keep that way. A token's offset is the parser's own count of bytes (or characters)
     * read, taken without building a location per token: Jackson 2.21 counts up to one past the token's first
     * character, and as the row's end is the separator, not part of any token, each comparison holds whether the
     * count stops at that character or one past it.
     *
     * @return the index of the row it stopped at (left for a parse of its own), or the number of rows
     */
    private static int parseAhead(List<SessionData> rows, int from, ObjectReader reader, boolean bytes) {
        int row = from;
        Rows stream = new Rows(rows, from);
        try (JsonParser parser = bytes ? reader.createParser(stream.bytes()) : reader.createParser(stream.text());
             MappingIterator<Object> values = reader.readValues(parser)) {
            ParserBase tokens = (ParserBase) parser;
            long start = 0;
            for (; row < rows.size(); row++) {
                SessionData data = rows.get(row);
                long end = start + data.length();
                if (!values.hasNextValue() || tokens.getTokenCharacterOffset() > end) {
                    return row; // no value of its own: DATA is empty
                }
                Object value = values.nextValue();
                if (tokens.getTokenCharacterOffset() > end || values.hasNextValue() && tokens.getTokenCharacterOffset() <= end) {
                    return row; // ran into the next row, or more than one value
                }
                data.parsed = value;
                start = end + 1;
            }
            return row;
        } catch (IOException | RuntimeException e) {
            return row;
        }
    }

    /** Whether the batch's parse kept this row's value (a row it left is parsed on its own). */
    boolean parsedAhead() {
        return parsed != null;
    }

    private int length() {
        return utf8 != null ? utf8.length : text != null ? text.length() : 0;
    }

    /**
     * The rows' DATA from a first row on, each row followed by a space, served in pieces to a byte stream
     * ({@link #bytes}) or a character stream ({@link #text}).
     */
    private static final class Rows {

        /** Copies {@code count} units of a row's DATA, from {@code from}, to {@code at} in the reader's buffer. */
        interface Piece {
            void copy(SessionData data, int from, int at, int count);
        }

        private final List<SessionData> rows;
        private int row;
        private int position;

        Rows(List<SessionData> rows, int from) {
            this.rows = rows;
            this.row = from;
        }

        /** @return the units served (at most {@code length}), or -1 after the last row's space */
        int serve(int length, Piece piece, IntConsumer space) {
            int served = 0;
            while (served < length && row < rows.size()) {
                SessionData data = rows.get(row);
                int left = data.length() - position;
                if (left > 0) {
                    int n = Math.min(left, length - served);
                    piece.copy(data, position, served, n);
                    position += n;
                    served += n;
                } else {
                    space.accept(served++);
                    row++;
                    position = 0;
                }
            }
            return served == 0 && length > 0 ? -1 : served;
        }

        InputStream bytes() {
            return new InputStream() {
                @Override
                public int read(byte[] buffer, int offset, int length) {
                    return serve(length, (data, from, at, n) -> System.arraycopy(data.utf8, from, buffer, offset + at, n),
                            at -> buffer[offset + at] = ' ');
                }

                @Override
                public int read() {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
                }
            };
        }

        Reader text() {
            return new Reader() {
                @Override
                public int read(char[] buffer, int offset, int length) {
                    return serve(length, (data, from, at, n) -> data.text.getChars(from, from + n, buffer, offset + at),
                            at -> buffer[offset + at] = ' ');
                }

                @Override
                public void close() {
                }
            };
        }
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
