package dev.offlinepreload.testsuite.keycloak;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.db.Sql;

/**
 * Offline tokens for seeded sessions, signed with the realm's own keys (read from the database), so that a benchmark
 * can refresh and read most of a million sessions without logging each one in (about 100 logins/s here). Each token is
 * a real token of the same client and realm with its session and user swapped: the refresh token (HS512, the realm's
 * generated HMAC key) and an access token (RS256, the realm's generated RSA key), each with a fresh id, issued now.
 * Keycloak checks them as it checks its own: signature, type, client, and that the offline session and its client
 * session exist (from the cache, or from the database on a miss).
 */
public final class TokenMinter {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Base64.Encoder B64URL = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64URL_DECODE = Base64.getUrlDecoder();

    /** A seeded session's tokens. */
    public record Minted(String sessionId, String refreshToken, String accessToken) {
    }

    private final Jwt refreshTemplate;
    private final Jwt accessTemplate;
    private final byte[] hmacSecret;
    private final PrivateKey rsaKey;

    /**
     * @param template a real offline login of the client the seeded sessions' client sessions belong to, in {@code realm}
     */
    public TokenMinter(KeycloakCluster cluster, String realm, OidcClient.TokenResponse template) {
        refreshTemplate = Jwt.parse(template.refreshToken());
        accessTemplate = Jwt.parse(template.accessToken());
        if (!"HS512".equals(refreshTemplate.header.path("alg").asText())
                || !"RS256".equals(accessTemplate.header.path("alg").asText())) {
            throw new IllegalStateException("realm " + realm + " signs refresh tokens with "
                    + refreshTemplate.header.path("alg") + " and access tokens with " + accessTemplate.header.path("alg")
                    + "; this minter signs HS512 and RS256 as Keycloak does by default");
        }
        List<Map<String, String>> keys = keyProviders(cluster, realm);
        String hmacKid = refreshTemplate.header.path("kid").asText();
        hmacSecret = B64URL_DECODE.decode(keys.stream().filter(k -> hmacKid.equals(k.get("kid"))).findFirst()
                .orElseThrow(() -> new IllegalStateException("realm " + realm + ": no key provider with kid " + hmacKid))
                .get("secret"));
        String rsaKid = accessTemplate.header.path("kid").asText();
        rsaKey = keys.stream().filter(k -> k.containsKey("certificate") && k.containsKey("privateKey")
                        && rsaKid.equals(keyId(k.get("certificate"))))
                .map(k -> privateKey(k.get("privateKey"))).findFirst()
                .orElseThrow(() -> new IllegalStateException("realm " + realm + ": no RSA key provider with kid " + rsaKid));
    }

    /** Tokens for each offline session of {@code realm} in {@code sessionIds}, in that order. */
    public List<Minted> mint(KeycloakCluster cluster, String realm, List<String> sessionIds) {
        Map<String, String> users = new HashMap<>();
        String ids = String.join("','", sessionIds);
        for (String row : Sql.rows(cluster, "SELECT s.user_session_id, s.user_id FROM offline_user_session s JOIN realm r"
                + " ON r.id = s.realm_id WHERE r.name = '" + realm + "' AND s.offline_flag = '1'"
                + " AND s.user_session_id IN ('" + ids + "')")) {
            String[] f = row.split("\\|");
            users.put(f[0], f[1]);
        }
        return sessionIds.stream().map(id -> {
            String user = users.get(id);
            if (user == null) {
                throw new IllegalArgumentException("no offline session " + id + " in realm " + realm);
            }
            return mint(id, user);
        }).toList();
    }

    /** Tokens of offline session {@code sessionId} of user {@code userId}. */
    public Minted mint(String sessionId, String userId) {
        long now = Instant.now().getEpochSecond();
        return new Minted(sessionId,
                sign(refreshTemplate.encodedHeader, swap(refreshTemplate, sessionId, userId, now), this::hmac),
                sign(accessTemplate.encodedHeader, swap(accessTemplate, sessionId, userId, now), this::rsa));
    }

    /**
     * The template's claims with the session, the user and a fresh id; issued now, expiring (if the template did) as
     * long after as it did.
     */
    private static ObjectNode swap(Jwt template, String sessionId, String userId, long now) {
        ObjectNode claims = template.claims.deepCopy();
        claims.put("sid", sessionId);
        claims.put("sub", userId);
        claims.put("jti", tokenContext(template) + UUID.randomUUID());
        claims.put("iat", now);
        if (template.claims.has("exp")) {
            claims.put("exp", now + template.claims.path("exp").asLong() - template.claims.path("iat").asLong());
        }
        if (template.claims.has("auth_time")) {
            claims.put("auth_time", now);
        }
        if (template.claims.has("session_state")) {
            claims.put("session_state", sessionId);
        }
        return claims;
    }

    /**
     * The template id's context prefix (six letters and a colon, "of..." for an offline session's token): Keycloak
     * reads the session type from it, and without it looks the session up among the online ones first, a cache miss
     * (with persistent sessions also a database read) that no real token causes.
     */
    private static String tokenContext(Jwt template) {
        String id = template.claims.path("jti").asText("");
        return id.substring(0, id.indexOf(':') + 1);
    }

    private interface Signer {
        byte[] sign(byte[] content) throws GeneralSecurityException;
    }

    private static String sign(String encodedHeader, ObjectNode claims, Signer signer) {
        try {
            String content = encodedHeader + "." + B64URL.encodeToString(JSON.writeValueAsBytes(claims));
            return content + "." + B64URL.encodeToString(signer.sign(content.getBytes(StandardCharsets.US_ASCII)));
        } catch (GeneralSecurityException | JsonProcessingException e) {
            throw new IllegalStateException("cannot sign a token", e);
        }
    }

    private byte[] hmac(byte[] content) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA512");
        mac.init(new SecretKeySpec(hmacSecret, "HmacSHA512"));
        return mac.doFinal(content);
    }

    private byte[] rsa(byte[] content) throws GeneralSecurityException {
        Signature signature = Signature.getInstance("SHA256withRSA");
        signature.initSign(rsaKey);
        signature.update(content);
        return signature.sign();
    }

    /** Each key provider component's configuration, for the realm's key providers. */
    private static List<Map<String, String>> keyProviders(KeycloakCluster cluster, String realm) {
        Map<String, Map<String, String>> components = new HashMap<>();
        for (String row : Sql.rows(cluster, "SELECT c.id, cc.name, cc.value FROM component c"
                + " JOIN component_config cc ON cc.component_id = c.id JOIN realm r ON r.id = c.parent_id"
                + " WHERE r.name = '" + realm + "' AND c.provider_type = 'org.keycloak.keys.KeyProvider'")) {
            String[] f = row.split("\\|", 3);
            components.computeIfAbsent(f[0], c -> new HashMap<>()).put(f[1], f[2]);
        }
        return List.copyOf(components.values());
    }

    /** Keycloak's key id of an RSA key: the base64url SHA-256 of its public key's encoding (KeyUtils.createKeyId). */
    private static String keyId(String certificate) {
        try {
            PublicKey key = CertificateFactory.getInstance("X.509").generateCertificate(
                    new ByteArrayInputStream(Base64.getMimeDecoder().decode(certificate))).getPublicKey();
            return B64URL.encodeToString(MessageDigest.getInstance("SHA-256").digest(key.getEncoded()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("a key provider's certificate cannot be read", e);
        }
    }

    /** The private key as Keycloak stores it: PKCS#1 ("RSA PRIVATE KEY") for its generated keys, or PKCS#8. */
    private static PrivateKey privateKey(String stored) {
        byte[] der = Base64.getMimeDecoder().decode(stored);
        try {
            KeyFactory rsa = KeyFactory.getInstance("RSA");
            try {
                return rsa.generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (InvalidKeySpecException notPkcs8) {
                return rsa.generatePrivate(new PKCS8EncodedKeySpec(pkcs8(der)));
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("an RSA key provider's private key is neither PKCS#1 nor PKCS#8", e);
        }
    }

    /** A PKCS#1 RSA private key wrapped as PKCS#8: version 0, algorithm rsaEncryption, the key as an octet string. */
    private static byte[] pkcs8(byte[] pkcs1) {
        byte[] algorithm = {0x02, 0x01, 0x00, 0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7,
                0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
        byte[] key = der(0x04, pkcs1);
        byte[] body = new byte[algorithm.length + key.length];
        System.arraycopy(algorithm, 0, body, 0, algorithm.length);
        System.arraycopy(key, 0, body, algorithm.length, key.length);
        return der(0x30, body);
    }

    /** One DER element: tag, length (long form above 127), content. */
    private static byte[] der(int tag, byte[] content) {
        int n = content.length;
        byte[] length = n < 128 ? new byte[] {(byte) n}
                : n < 256 ? new byte[] {(byte) 0x81, (byte) n}
                : new byte[] {(byte) 0x82, (byte) (n >> 8), (byte) n};
        byte[] out = new byte[1 + length.length + n];
        out[0] = (byte) tag;
        System.arraycopy(length, 0, out, 1, length.length);
        System.arraycopy(content, 0, out, 1 + length.length, n);
        return out;
    }

    /** A JWT's header (as sent, and parsed) and claims. */
    private record Jwt(String encodedHeader, ObjectNode header, ObjectNode claims) {
        static Jwt parse(String jwt) {
            String[] parts = jwt.split("\\.");
            try {
                return new Jwt(parts[0], (ObjectNode) JSON.readTree(B64URL_DECODE.decode(parts[0])),
                        (ObjectNode) JSON.readTree(B64URL_DECODE.decode(parts[1])));
            } catch (IOException e) {
                throw new IllegalStateException("not a JWT: " + jwt, e);
            }
        }
    }
}
