package dev.offlinepreload.testsuite.keycloak;

import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;

/**
 * Talks to a node's real token, revocation and login endpoints, as an app would: by password grant, or through the
 * browser login (authorization code flow) in a browser of its own, whose cookies it keeps.
 */
public final class OidcClient {

    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * HTTP/1.1, as a load balancer speaks to Keycloak's nodes: a connection per request in flight. Java's client would
     * otherwise upgrade to HTTP/2 (h2c) and carry every request to a node over one connection, on whose lock Keycloak's
     * worker threads then queued behind one another (Vert.x's {@code Http2ServerConnection}: 463 s of blocked threads
     * on one node in a 120-s restart window, run ax), a wait no balancer in front of Keycloak would cause.
     */
    public static final HttpClient.Version PROTOCOL = HttpClient.Version.HTTP_1_1;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(PROTOCOL)
            .connectTimeout(Duration.ofSeconds(10)).followRedirects(HttpClient.Redirect.NEVER).build();
    private static final Pattern LOGIN_FORM = Pattern.compile("<form[^>]*\\bid=\"kc-form-login\"[^>]*>");
    private static final Pattern ACTION = Pattern.compile("\\baction=\"([^\"]+)\"");

    private final KeycloakNode node;
    private final String realm;
    private final String clientId;
    /**
     * The browser's cookies, name to value, sent back on every request. Kept by hand: Keycloak counts http://localhost
     * as a secure context and marks its cookies {@code Secure}, which a browser on localhost sends over http but Java's
     * {@code CookieManager} does not. One realm on one node, so paths and domains do not matter.
     */
    private final Map<String, String> cookies;

    /** The test realm's public client. */
    public OidcClient(KeycloakNode node) {
        this(node, TestRealm.REALM, TestRealm.CLIENT_ID);
    }

    /** Any client that {@link TestRealm} makes: public, with the password grant and the authorization code flow. */
    public OidcClient(KeycloakNode node, String realm, String clientId) {
        this(node, realm, clientId, new HashMap<>());
    }

    private OidcClient(KeycloakNode node, String realm, String clientId, Map<String, String> cookies) {
        this.node = node;
        this.realm = realm;
        this.clientId = clientId;
        this.cookies = cookies;
    }

    /** Another client of the same realm in the same browser: it shares this one's cookies, and so its user session. */
    public OidcClient inSameBrowser(String otherClientId) {
        return new OidcClient(node, realm, otherClientId, cookies);
    }

    /** Password grant with scope offline_access: the response's refresh token is an offline token. */
    public TokenResponse offlineLogin(String username, String password) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "password");
        form.put("client_id", clientId);
        form.put("username", username);
        form.put("password", password);
        form.put("scope", "openid offline_access");
        return token(form);
    }

    /**
     * Authorization code flow through the login form, with scope openid: signs this browser in, to a new user session
     * that its cookies then carry. Without offline_access, as Keycloak 26.7 drops a user session whose first login
     * asked for it as soon as the offline token is out, and with it the browser's single sign-on.
     */
    public TokenResponse browserLogin(String username, String password) {
        HttpResponse<String> page = get(authorizationUri("openid"));
        Matcher form = LOGIN_FORM.matcher(page.body());
        Matcher action = ACTION.matcher(form.find() ? form.group() : "");
        if (page.statusCode() != 200 || !action.find()) {
            throw new IllegalStateException("No login form from " + node.name() + ": HTTP " + page.statusCode() + " "
                    + page.body());
        }
        Map<String, String> credentials = new LinkedHashMap<>();
        credentials.put("username", username);
        credentials.put("password", password);
        // The action names the cluster's public hostname; this browser reaches it through its node.
        URI target = URI.create(action.group(1).replace("&amp;", "&"));
        return redeemCode(post(URI.create(node.url() + target.getRawPath() + "?" + target.getRawQuery()), credentials));
    }

    /**
     * Authorization code flow with scope offline_access, answered at once from this browser's single sign-on: an
     * offline token of the browser's user session. Fails if Keycloak asks for a login instead.
     */
    public TokenResponse offlineSsoLogin() {
        return redeemCode(get(authorizationUri("openid offline_access")));
    }

    public TokenResponse refresh(String refreshToken) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "refresh_token");
        form.put("client_id", clientId);
        form.put("refresh_token", refreshToken);
        return token(form);
    }

    /**
     * The userinfo endpoint with an access token: a read-only lookup of the token's user session (for an offline
     * token, its offline session: from the cache, or from the database on a miss).
     *
     * @return the HTTP status
     */
    public int userinfo(String accessToken) {
        return send(HttpRequest.newBuilder(endpoint("/userinfo")).header("Authorization", "Bearer " + accessToken).GET())
                .statusCode();
    }

    /**
     * RFC 7662 introspection of an access token, by this realm's confidential client {@code resourceServer} (client
     * secret sent as HTTP Basic, as a resource server would): Keycloak checks the token's user session, for an offline
     * token's access token its offline session (from the cache, or from the database on a miss), without writing.
     *
     * @return the answer: HTTP status and the JSON, whose {@code active} says whether the token is valid
     */
    public TokenResponse introspect(String accessToken, String resourceServer, String secret) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("token", accessToken);
        form.put("token_type_hint", "access_token");
        String credentials = URLEncoder.encode(resourceServer, StandardCharsets.UTF_8) + ":"
                + URLEncoder.encode(secret, StandardCharsets.UTF_8);
        return answer("Introspection endpoint", send(formPost(endpoint("/token/introspect"), form)
                .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)))));
    }

    /**
     * RFC 7009 revocation of a refresh token: for an offline token, Keycloak ends that client's offline client
     * session, and the user session with it only if no other client has one.
     */
    public int revoke(String refreshToken) {
        Map<String, String> form = new LinkedHashMap<>();
        form.put("client_id", clientId);
        form.put("token", refreshToken);
        form.put("token_type_hint", "refresh_token");
        return post(endpoint("/revoke"), form).statusCode();
    }

    private URI authorizationUri(String scope) {
        Map<String, String> query = new LinkedHashMap<>();
        query.put("client_id", clientId);
        query.put("response_type", "code");
        query.put("scope", scope);
        query.put("redirect_uri", TestRealm.redirectUri(clientId));
        return URI.create(endpoint("/auth") + "?" + encode(query));
    }

    /** Takes the code from Keycloak's redirect to the app (never followed) and exchanges it at the token endpoint. */
    private TokenResponse redeemCode(HttpResponse<String> redirect) {
        String location = redirect.headers().firstValue("Location").orElse("");
        String code = Arrays.stream(location.substring(location.indexOf('?') + 1).split("&"))
                .filter(p -> p.startsWith("code=")).map(p -> URLDecoder.decode(p.substring(5), StandardCharsets.UTF_8))
                .findFirst().orElse(null);
        if (redirect.statusCode() != 302 || code == null) {
            throw new IllegalStateException("No code for " + clientId + " from " + node.name() + ": HTTP "
                    + redirect.statusCode() + " " + location + " " + redirect.body());
        }
        Map<String, String> form = new LinkedHashMap<>();
        form.put("grant_type", "authorization_code");
        form.put("client_id", clientId);
        form.put("code", code);
        form.put("redirect_uri", TestRealm.redirectUri(clientId));
        return token(form);
    }

    private TokenResponse token(Map<String, String> form) {
        return answer("Token endpoint", post(endpoint("/token"), form));
    }

    private TokenResponse answer(String endpoint, HttpResponse<String> response) {
        try {
            String answer = response.body();
            return new TokenResponse(response.statusCode(), answer.isBlank() ? JSON.missingNode() : JSON.readTree(answer));
        } catch (IOException e) {
            throw new IllegalStateException(endpoint + " of " + node.name() + " answered no JSON: " + response.body(), e);
        }
    }

    private URI endpoint(String path) {
        return URI.create(node.url() + "/realms/" + realm + "/protocol/openid-connect" + path);
    }

    private HttpResponse<String> get(URI uri) {
        return send(HttpRequest.newBuilder(uri).GET());
    }

    private HttpResponse<String> post(URI uri, Map<String, String> form) {
        return send(formPost(uri, form));
    }

    private static HttpRequest.Builder formPost(URI uri, Map<String, String> form) {
        return HttpRequest.newBuilder(uri).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(encode(form)));
    }

    /** Sends the browser's cookies and keeps the ones the answer sets; a cookie set with Max-Age=0 is dropped. */
    private HttpResponse<String> send(HttpRequest.Builder request) {
        if (!cookies.isEmpty()) {
            request.header("Cookie", cookies.entrySet().stream().map(c -> c.getKey() + "=" + c.getValue())
                    .collect(Collectors.joining("; ")));
        }
        HttpResponse<String> response;
        try {
            response = HTTP.send(request.timeout(Duration.ofSeconds(90)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException("Request to " + node.name() + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        for (String setCookie : response.headers().allValues("Set-Cookie")) {
            String[] parts = setCookie.split(";");
            String name = parts[0].substring(0, parts[0].indexOf('=')).trim();
            if (Arrays.stream(parts).anyMatch(a -> a.trim().equalsIgnoreCase("Max-Age=0"))) {
                cookies.remove(name);
            } else {
                cookies.put(name, parts[0].substring(parts[0].indexOf('=') + 1).trim());
            }
        }
        return response;
    }

    private static String encode(Map<String, String> form) {
        return form.entrySet().stream()
                .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
    }

    /** The token (or introspection) endpoint's answer; {@code json} holds the tokens (or the token's state) or the OAuth error. */
    public record TokenResponse(int status, JsonNode json) {

        /** Introspection's verdict: {@code "active": true}. */
        public boolean active() {
            return json.path("active").asBoolean(false);
        }

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

        /** A JWT's claims, unverified. */
        public static JsonNode claims(String jwt) {
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
