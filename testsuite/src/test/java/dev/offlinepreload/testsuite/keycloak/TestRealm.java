package dev.offlinepreload.testsuite.keycloak;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import jakarta.ws.rs.core.Response;
import org.keycloak.admin.client.Keycloak;
import org.keycloak.admin.client.resource.RealmResource;
import org.keycloak.representations.idm.ClientRepresentation;
import org.keycloak.representations.idm.CredentialRepresentation;
import org.keycloak.representations.idm.ProtocolMapperRepresentation;
import org.keycloak.representations.idm.RealmRepresentation;
import org.keycloak.representations.idm.UserRepresentation;

/**
 * A realm with public clients allowed to use the password grant and the authorization code flow, and users who can ask
 * for offline tokens.
 */
public final class TestRealm {

    public static final String REALM = "test";
    public static final String CLIENT_ID = "mobile-app";
    /** The confidential client of {@link #addResourceServer}, as an API that introspects the tokens it is sent. */
    public static final String RESOURCE_SERVER = "resource-server";
    public static final String RESOURCE_SERVER_SECRET = "resource-server-secret";

    private TestRealm() {
    }

    public static Keycloak admin(KeycloakNode node) {
        return Keycloak.getInstance(node.url(), "master", KeycloakCluster.ADMIN_USER, KeycloakCluster.ADMIN_PASSWORD,
                "admin-cli");
    }

    /**
     * Creates the realm with client {@link #CLIENT_ID} and {@code users} users named user1..userN, each with password
     * "password".
     */
    public static void create(KeycloakNode node, int users) {
        create(node, List.of(CLIENT_ID), users);
    }

    /** Creates the realm with one client per id in {@code clientIds} and {@code users} users, as above. */
    public static void create(KeycloakNode node, List<String> clientIds, int users) {
        create(node, realm(REALM, clientIds, users));
    }

    /**
     * A realm with one public client per id in {@code clientIds} and {@code users} users (user1..userN,
     * password "password"). Passwords are hashed with a single iteration so that thousands of logins take seconds:
     * only for benchmarks and seeding, never a production setting.
     */
    public static void create(KeycloakNode node, String realmName, List<String> clientIds, int users) {
        RealmRepresentation realm = realm(realmName, clientIds, users);
        realm.setPasswordPolicy("hashIterations(1)");
        create(node, realm);
    }

    private static void create(KeycloakNode node, RealmRepresentation realm) {
        try (Keycloak admin = admin(node)) {
            admin.realms().create(realm);
        }
    }

    private static RealmRepresentation realm(String realmName, List<String> clientIds, int users) {
        RealmRepresentation realm = new RealmRepresentation();
        realm.setRealm(realmName);
        realm.setEnabled(true);
        realm.setSslRequired("none");
        realm.setClients(clientIds.stream().map(id -> {
            ClientRepresentation client = new ClientRepresentation();
            client.setClientId(id);
            client.setPublicClient(true);
            client.setDirectAccessGrantsEnabled(true);
            client.setStandardFlowEnabled(true);
            client.setRedirectUris(List.of(redirectUri(id)));
            return client;
        }).toList());
        realm.setUsers(IntStream.rangeClosed(1, users).mapToObj(i -> user(i, realmName)).toList());
        return realm;
    }

    /**
     * Adds {@link #RESOURCE_SERVER} to a realm (confidential, with no flow of its own: it only introspects tokens) and
     * puts it in the audience of {@code appClientId}'s access tokens, as the API the app calls: Keycloak answers an
     * introspection only for a client in the token's audience.
     */
    public static void addResourceServer(KeycloakNode node, String realmName, String appClientId) {
        ClientRepresentation client = new ClientRepresentation();
        client.setClientId(RESOURCE_SERVER);
        client.setPublicClient(false);
        client.setSecret(RESOURCE_SERVER_SECRET);
        client.setStandardFlowEnabled(false);
        client.setDirectAccessGrantsEnabled(false);
        ProtocolMapperRepresentation audience = new ProtocolMapperRepresentation();
        audience.setName(RESOURCE_SERVER + " audience");
        audience.setProtocol("openid-connect");
        audience.setProtocolMapper("oidc-audience-mapper");
        audience.setConfig(Map.of("included.client.audience", RESOURCE_SERVER, "access.token.claim", "true",
                "introspection.token.claim", "true"));
        try (Keycloak admin = admin(node)) {
            RealmResource realm = admin.realm(realmName);
            created(realm.clients().create(client), "client " + RESOURCE_SERVER);
            String app = realm.clients().findByClientId(appClientId).get(0).getId();
            created(realm.clients().get(app).getProtocolMappers().createMapper(audience), "audience mapper of " + appClientId);
        }
    }

    private static void created(Response response, String what) {
        try (response) {
            if (response.getStatus() != 201) {
                throw new IllegalStateException(what + " not created: HTTP " + response.getStatus());
            }
        }
    }

    /** Where the authorization code flow sends client {@code clientId}'s browser: never fetched, only its code read. */
    public static String redirectUri(String clientId) {
        return "http://localhost/" + clientId;
    }

    public static String username(int i) {
        return "user" + i;
    }

    private static UserRepresentation user(int i, String realmName) {
        UserRepresentation user = new UserRepresentation();
        user.setUsername(username(i));
        user.setEnabled(true);
        // A complete profile, so the password grant is not stopped by a required action.
        user.setEmail(username(i) + "@example.test");
        user.setEmailVerified(true);
        user.setFirstName("User");
        user.setLastName(Integer.toString(i));
        CredentialRepresentation password = new CredentialRepresentation();
        password.setType(CredentialRepresentation.PASSWORD);
        password.setValue("password");
        password.setTemporary(false);
        user.setCredentials(List.of(password));
        user.setAttributes(Map.of());
        // Users imported with a realm get no default roles; offline_access comes with them.
        user.setRealmRoles(List.of("default-roles-" + realmName));
        return user;
    }
}
