package dev.offlinepreload.testsuite.keycloak;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import dev.offlinepreload.testsuite.cluster.KeycloakCluster;
import dev.offlinepreload.testsuite.cluster.KeycloakNode;
import org.keycloak.admin.client.Keycloak;
import org.keycloak.representations.idm.ClientRepresentation;
import org.keycloak.representations.idm.CredentialRepresentation;
import org.keycloak.representations.idm.RealmRepresentation;
import org.keycloak.representations.idm.UserRepresentation;

/**
 * A realm with public clients allowed to use the password grant and the authorization code flow, and users who can ask
 * for offline tokens.
 */
public final class TestRealm {

    public static final String REALM = "test";
    public static final String CLIENT_ID = "mobile-app";

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
