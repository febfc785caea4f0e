package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.keycloak.models.UserSessionModel;
import org.keycloak.models.jpa.session.ImmutablePersistentClientSessionEntity;
import org.keycloak.models.jpa.session.ImmutablePersistentUserSessionEntity;
import org.keycloak.models.session.PersistentAuthenticatedClientSessionAdapter;
import org.keycloak.models.session.PersistentUserSessionAdapter;

/** DATA parsed by the loader reads exactly as Keycloak's own lazy parse of the same row, from bytes and from text. */
class SessionDataTest {

    private static final String USER_DATA = "{\"brokerSessionId\":null,\"brokerUserId\":null,\"ipAddress\":\"172.21.0.1\","
            + "\"authMethod\":\"openid-connect\",\"rememberMe\":true,\"started\":0,\"notes\":{\"KC_DEVICE_NOTE\":\"eyJpcEFkZHJlc3Mi\","
            + "\"AUTH_TIME\":\"1763850000\",\"authenticators-completed\":\"{\\\"ee1b\\\":1763850000}\",\"ünïcode\":\"é—✓\"},"
            + "\"state\":\"LOGGED_IN\",\"loginUsername\":\"user1\"}";
    private static final String CLIENT_DATA = "{\"authMethod\":\"openid-connect\",\"redirectUri\":\"http://localhost/app\","
            + "\"notes\":{\"scope\":\"openid offline_access\",\"iss\":\"http://localhost:8080/realms/test\"},"
            + "\"action\":\"AUTHENTICATE\"}";

    private static ImmutablePersistentUserSessionEntity userRow(String data) {
        return new ImmutablePersistentUserSessionEntity("s1", "realm", "user", 1, 2, null, "1", data, false);
    }

    private static ImmutablePersistentClientSessionEntity clientRow(String data) {
        return new ImmutablePersistentClientSessionEntity("s1", "client", "local", "local", "1", data, "realm", 2);
    }

    private static PersistentUserSessionAdapter user(ImmutablePersistentUserSessionEntity row) {
        return new PersistentUserSessionAdapter(null, row, null, row.userId(), new HashMap<>());
    }

    private static PersistentAuthenticatedClientSessionAdapter client(ImmutablePersistentClientSessionEntity row) {
        return new PersistentAuthenticatedClientSessionAdapter(null, row, null, null, null);
    }

    /** DATA as PostgreSQL's bytes and as other databases' text. */
    private static List<SessionData> bothForms(String json) {
        return List.of(new SessionData(json.getBytes(StandardCharsets.UTF_8), null), new SessionData(null, json));
    }

    @Test
    void aUserSessionReadsAsKeycloakParsesIt() throws IOException {
        PersistentUserSessionAdapter keycloak = user(userRow(USER_DATA));
        for (SessionData data : bothForms(USER_DATA)) {
            PersistentUserSessionAdapter loaded = user(userRow(null));
            data.parseInto(loaded);
            assertThat(loaded.getNotes()).isEqualTo(keycloak.getNotes()).containsEntry("ünïcode", "é—✓");
            assertThat(loaded.getIpAddress()).isEqualTo(keycloak.getIpAddress()).isEqualTo("172.21.0.1");
            assertThat(loaded.getAuthMethod()).isEqualTo(keycloak.getAuthMethod());
            assertThat(loaded.isRememberMe()).isEqualTo(keycloak.isRememberMe()).isTrue();
            assertThat(loaded.getState()).isEqualTo(keycloak.getState()).isEqualTo(UserSessionModel.State.LOGGED_IN);
            assertThat(loaded.getBrokerSessionId()).isEqualTo(keycloak.getBrokerSessionId());
        }
    }

    @Test
    void aClientSessionReadsAsKeycloakParsesIt() throws IOException {
        PersistentAuthenticatedClientSessionAdapter keycloak = client(clientRow(CLIENT_DATA));
        for (SessionData data : bothForms(CLIENT_DATA)) {
            PersistentAuthenticatedClientSessionAdapter loaded = client(clientRow(null));
            data.parseInto(loaded);
            assertThat(loaded.getNotes()).isEqualTo(keycloak.getNotes()).hasSize(2);
            assertThat(loaded.getRedirectUri()).isEqualTo(keycloak.getRedirectUri());
            assertThat(loaded.getAction()).isEqualTo(keycloak.getAction()).isEqualTo("AUTHENTICATE");
            assertThat(loaded.getProtocol()).isEqualTo(keycloak.getProtocol());
        }
    }

    @Test
    void equalValuesOfTwoSessionsAreOneInstance() throws IOException {
        PersistentUserSessionAdapter first = user(userRow(null));
        PersistentUserSessionAdapter second = user(userRow(null));
        new SessionData(USER_DATA.getBytes(StandardCharsets.UTF_8), null).parseInto(first);
        new SessionData(null, USER_DATA).parseInto(second);
        assertThat(second.getIpAddress()).isSameAs(first.getIpAddress());
        assertThat(second.getNotes().get("KC_DEVICE_NOTE")).isSameAs(first.getNotes().get("KC_DEVICE_NOTE"));
        PersistentAuthenticatedClientSessionAdapter client = client(clientRow(null));
        new SessionData(null, CLIENT_DATA).parseInto(client);
        assertThat(client.getProtocol()).as("the same value in another session kind").isSameAs(first.getAuthMethod());
    }

    @Test
    void notesAreAHashMapWithKeycloaksEntries() throws IOException {
        String json = "{\"notes\":{\"a\":\"1\",\"b\":null,\"c\":7,\"d\":true,\"a\":\"2\"},\"userSessionNotes\":{}}";
        PersistentAuthenticatedClientSessionAdapter keycloak = client(clientRow(json));
        for (SessionData data : bothForms(json)) {
            PersistentAuthenticatedClientSessionAdapter loaded = client(clientRow(null));
            data.parseInto(loaded);
            assertThat(loaded.getNotes()).isEqualTo(keycloak.getNotes()).containsEntry("a", "2").containsEntry("b", null)
                    .containsEntry("c", "7").containsEntry("d", "true").hasSize(4)
                    .isExactlyInstanceOf(HashMap.class);
        }
        for (String many : List.of("{\"notes\":{}}", manyNotes(40))) {
            PersistentUserSessionAdapter loaded = user(userRow(null));
            new SessionData(null, many).parseInto(loaded);
            assertThat(loaded.getNotes()).isEqualTo(user(userRow(many)).getNotes()).isExactlyInstanceOf(HashMap.class);
        }
        PersistentUserSessionAdapter absent = user(userRow(null));
        new SessionData(null, "{\"notes\":null}").parseInto(absent);
        assertThat(absent.getNotes()).isNull();
    }

    private static String manyNotes(int count) {
        StringBuilder json = new StringBuilder("{\"notes\":{");
        for (int i = 0; i < count; i++) {
            json.append(i == 0 ? "" : ",").append("\"note").append(i).append("\":\"value").append(i).append('"');
        }
        return json.append("}}").toString();
    }

    /**
     * Rows parsed as one batch read exactly as each row parsed alone: the same value, or the same error, whatever the
     * rows around it hold; rows that are one value each are parsed ahead, the others are left to their own parse.
     */
    @Test
    void aBatchReadsAsEachRowAlone() {
        String other = USER_DATA.replace("LOGGED_IN", "LOGGED_OUT").replace("172.21.0.1", "10.0.0.9");
        List<String> rows = Arrays.asList(USER_DATA, other, "{\"notes\":{", other, "", null, USER_DATA,
                USER_DATA + " " + other, other, "{\"ipAddress\":\"a", "b\"}", USER_DATA + "  ", " " + other,
                "{\"unknownField\":1}", "null", USER_DATA, "{\"ipAddress\":\"x\"} 7", "[", other, "]", USER_DATA,
                "{\"ipAddress\":\"x\"", "}", other, "{\"notes\":{\"long\":\"" + "é".repeat(20_000) + "\"}}", other);
        List<Boolean> ahead = List.of(true, true, false, true, false, false, true, false, true, false, false, true, true, false,
                false, true, false, false, false, false, true, false, false, true, true, true);
        // row 18: the next row's stray "]" fails the look past its end; row 24 is longer than the parser's buffer
        for (boolean bytes : List.of(true, false)) {
            List<SessionData> batch = rows.stream().map(json -> bytes
                    ? new SessionData(json == null ? null : json.getBytes(StandardCharsets.UTF_8), null)
                    : new SessionData(null, json)).toList();
            SessionData.parseUserSessions(batch);
            for (int i = 0; i < rows.size(); i++) {
                SessionData alone = bytes ? new SessionData(rows.get(i) == null ? null : rows.get(i).getBytes(StandardCharsets.UTF_8), null)
                        : new SessionData(null, rows.get(i));
                assertThat(readAs(batch.get(i))).as("row %d (%s)", i, rows.get(i)).isEqualTo(readAs(alone));
                assertThat(batch.get(i).parsedAhead()).as("row %d parsed ahead", i).isEqualTo(ahead.get(i));
            }
        }
    }

    @Test
    void aBatchOfClientSessionsReadsAsEachRowAlone() throws IOException {
        List<SessionData> batch = List.of(new SessionData(null, CLIENT_DATA), new SessionData(null, "{\"notes\":"),
                new SessionData(null, CLIENT_DATA.replace("AUTHENTICATE", "LOGGED_OUT")));
        SessionData.parseClientSessions(batch);
        assertThat(batch).extracting(SessionData::parsedAhead).containsExactly(true, false, true);
        PersistentAuthenticatedClientSessionAdapter first = client(clientRow(null));
        batch.get(0).parseInto(first);
        assertThat(first.getNotes()).isEqualTo(client(clientRow(CLIENT_DATA)).getNotes());
        assertThatThrownBy(() -> batch.get(1).parseInto(client(clientRow(null)))).isInstanceOf(IOException.class);
        PersistentAuthenticatedClientSessionAdapter third = client(clientRow(null));
        batch.get(2).parseInto(third);
        assertThat(third.getAction()).isEqualTo("LOGGED_OUT");
    }

    /** What a user session's DATA reads as: its fields, or the class of the error. */
    private static String readAs(SessionData data) {
        PersistentUserSessionAdapter adapter = user(userRow(null));
        try {
            data.parseInto(adapter);
        } catch (IOException e) {
            return "error " + e.getClass().getSimpleName();
        }
        return adapter.getNotes() + " " + adapter.getIpAddress() + " " + adapter.getAuthMethod() + " " + adapter.isRememberMe()
                + " " + adapter.getState() + " " + adapter.getBrokerSessionId();
    }

    @Test
    void corruptOrMissingDataIsAnError() {
        assertThatThrownBy(() -> new SessionData("{\"notes\":{".getBytes(StandardCharsets.UTF_8), null).parseInto(user(userRow(null))))
                .isInstanceOf(IOException.class);
        assertThatThrownBy(() -> new SessionData(null, "{\"unknownField\":1}").parseInto(user(userRow(null))))
                .as("Keycloak's mapper refuses unknown properties too").isInstanceOf(IOException.class);
        assertThatThrownBy(() -> new SessionData(null, null).parseInto(client(clientRow(null)))).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> new SessionData(null, "{\"notes\":{\"a\":{}}}").parseInto(user(userRow(null))))
                .as("a note that is an object").isInstanceOf(IOException.class);
        assertThatThrownBy(() -> new SessionData(null, "{\"notes\":[\"a\"]}").parseInto(user(userRow(null))))
                .as("notes that are not an object").isInstanceOf(IOException.class);
        assertThatThrownBy(() -> new SessionData("null".getBytes(StandardCharsets.UTF_8), null).parseInto(client(clientRow(null))))
                .isInstanceOf(IOException.class);
    }
}
