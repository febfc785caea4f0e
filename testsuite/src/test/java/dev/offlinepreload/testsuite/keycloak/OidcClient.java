package dev.offlinepreload.testsuite.keycloak;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;

/** Talks to a node's real token endpoint, as a mobile app would. */
public final class OidcClient {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private final KeycloakNode node;
    private final String realm;
    private final String clientId;

    /** The test realm's public client. */
    public OidcClient(KeycloakNode node) {
        this(node, TestRealm.REALM, TestRealm.CLIENT_ID);
    }

    /** Any public client with direct access grants, e.g. one of {@link TestRealm#create(KeycloakNode, String, java.util.List, int)}'s. */
    public OidcClient(KeycloakNode node, String realm, String clientId) {
        this.node = node;
        this.realm = realm;
        this.clientId = clientId;
    }

    /** Password grant with scope offline_access: the response's refresh token is an offline token. */
    public TokenResponse offlineLogin(String username, String password) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "password");
        form.put("client_id", clientId);
        form.put("username", username);
        form.put("password", password);
        form.put("scope", "openid offline_access");
        return post(form);
    }

    public TokenResponse refresh(String refreshToken) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "refresh_token");
        form.put("client_id", clientId);
        form.put("refresh_token", refreshToken);
        return post(form);
    }

    /** RFC 7009 revocation of a refresh token: for an offline token, Keycloak ends that offline client session. */
    public int revoke(String refreshToken) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("client_id", clientId);
        form.put("token", refreshToken);
        form.put("token_type_hint", "refresh_token");
        return send("/revoke", form).status();
    }

    private TokenResponse post(Map<String, String> form) {
        return send("/token", form);
    }

    private TokenResponse send(String endpoint, Map<String, String> form) {
        String body = form.entrySet().stream()
                .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create(node.url() + "/realms/" + realm + "/protocol/openid-connect" + endpoint))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        try {
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            String answer = response.body();
            return new TokenResponse(response.statusCode(), answer.isBlank() ? JSON.missingNode() : JSON.readTree(answer));
        } catch (IOException e) {
            throw new IllegalStateException("Token request to " + node.name() + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The token endpoint's answer; {@code json} holds either the tokens or the OAuth error. */
    public record TokenResponse(int status, JsonNode json) {

        public String refreshToken() {
            return json.path("refresh_token").asText(null);
        }

        public String accessToken() {
            return json.path("access_token").asText(null);
        }

        /** The "typ" claim of the refresh token: "Offline" for an offline token. */
        public String refreshTokenType() {
            return claims(refreshToken()).path("typ").asText(null);
        }

        /** The "sid" claim: the user session the token belongs to. */
        public String sessionId() {
            return claims(refreshToken()).path("sid").asText(null);
        }

        private static JsonNode claims(String jwt) {
            if (jwt == null) {
                return JSON.missingNode();
            }
            try {
                return JSON.readTree(Base64.getUrlDecoder().decode(jwt.split("\\.")[1]));
            } catch (IOException e) {
                throw new IllegalStateException("Not a JWT: " + jwt, e);
            }
        }

        @Override
        public String toString() {
            return "HTTP " + status + " " + json;
        }
    }
}
