package dev.offlinepreload.schema;

import static org.assertj.core.api.Assertions.assertThatCode;

import java.lang.reflect.Proxy;

import org.junit.jupiter.api.Test;
import org.keycloak.models.KeycloakSessionFactory;

class IndexChangelogProviderFactoryTest {

    /**
     * Keycloak publishes the post-migration event from its startup: an error escaping the listener stops the node. On
     * Keycloak 26.4, built against 26.7, the listener met NoSuchMethodError (getNodeInfo) and the node did not start.
     */
    @Test
    void internalsThatDoNotMatchNeverEscapeIntoKeycloaksStartup() {
        KeycloakSessionFactory olderKeycloak = (KeycloakSessionFactory) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {KeycloakSessionFactory.class}, (proxy, method, args) -> {
                    throw new NoSuchMethodError("'org.keycloak.models.NodeInfo getNodeInfo()'");
                });
        assertThatCode(() -> IndexChangelogProviderFactory.afterMigration(olderKeycloak)).doesNotThrowAnyException();
    }
}
