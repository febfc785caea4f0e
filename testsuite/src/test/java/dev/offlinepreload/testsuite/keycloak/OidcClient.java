package dev.offlinepreload.testsuite.keycloak;

import java.io.IOException;
import java.net.CookieManager;
import java.net.CookiePolicy;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;

/** Talks to a node's real token endpoint, as a mobile app would. */
public final class OidcClient {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern FORM_ACTION = Pattern.compile("<form[^>]*id=\"kc-form-login\"[^>]*action=\"([^\"]+)\"");
    private static final Pattern CODE = Pattern.compile("[?&]code=([^&#]+)");
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

    /**
     * One offline session with a client session per client, as a user who opens several apps on one device: the
     * authorization code flow for the first client with the login form, then for each further client with the SSO
     * cookie of the same browser (no form), each code exchanged for an offline token. All responses share one
     * session id. The clients need the standard flow and the redirect URI {@link TestRealm#REDIRECT_URI}.
     */
    public static List<TokenResponse> offlineLoginWithSso(KeycloakNode node, String realm, List<String> clientIds,
                                                          String username, String password) {
        HttpClient browser = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
                .cookieHandler(new CookieManager(null, CookiePolicy.ACCEPT_ALL)).followRedirects(HttpClient.Redirect.NEVER)
                .build();
        List<TokenResponse> tokens = new ArrayList<>();
        for (String clientId : clientIds) {
            String auth = node.url() + "/realms/" + realm + "/protocol/openid-connect/auth?response_type=code&client_id="
                    + clientId + "&scope=" + URLEncoder.encode("openid offline_access", StandardCharsets.UTF_8)
                    + "&redirect_uri=" + URLEncoder.encode(TestRealm.REDIRECT_URI, StandardCharsets.UTF_8);
            HttpResponse<String> page = browse(browser, HttpRequest.newBuilder(URI.create(auth)).GET());
            if (page.statusCode() == 200) { // the login form; with an SSO cookie Keycloak redirects at once
                Matcher action = FORM_ACTION.matcher(page.body());
                if (!action.find()) {
                    throw new IllegalStateException("No login form in the answer to " + auth + ": " + page.body());
                }
                // The form posts to the cluster's public hostname; send it to this node instead.
                String target = action.group(1).replace("&amp;", "&").replaceFirst("^https?://[^/]+", node.url());
                page = browse(browser, HttpRequest.newBuilder(URI.create(target))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString("username=" + URLEncoder.encode(username, StandardCharsets.UTF_8)
                                + "&password=" + URLEncoder.encode(password, StandardCharsets.UTF_8))));
            }
            int status = page.statusCode();
            String location = page.headers().firstValue("Location").orElseThrow(() ->
                    new IllegalStateException("No redirect with a code for " + clientId + ": " + status));
            Matcher code = CODE.matcher(location);
            if (!code.find()) {
                throw new IllegalStateException("No code in " + location);
            }
            Map<String, String> form = new LinkedHashMap<>();
            form.put("grant_type", "authorization_code");
            form.put("client_id", clientId);
            form.put("code", URLDecoder.decode(code.group(1), StandardCharsets.UTF_8));
            form.put("redirect_uri", TestRealm.REDIRECT_URI);
            tokens.add(new OidcClient(node, realm, clientId).post(form));
        }
        return tokens;
    }

    private static HttpResponse<String> browse(HttpClient browser, HttpRequest.Builder request) {
        try {
            return browser.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException("Browser request failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
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
