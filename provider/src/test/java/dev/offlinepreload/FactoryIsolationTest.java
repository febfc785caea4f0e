package dev.offlinepreload;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Arrays;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

/**
 * Keycloak builds the server by loading every factory of every jar in providers/, and does not catch what a factory
 * throws: a factory that cannot link against the Keycloak it lands on would stop that Keycloak's build. Here the
 * factories are loaded as Keycloak's build loads them, from a class path without Keycloak's session internals
 * (keycloak-model-infinispan and Infinispan itself), the way a Keycloak that moved or changed them would look.
 */
class FactoryIsolationTest {

    @Test
    void aKeycloakWithoutTheInternalsTheJarNeedsGetsTheStockServer() throws Exception {
        try (URLClassLoader keycloak = withoutSessionInternals()) {
            Object factory = keycloak.loadClass(PreloadingUserSessionProviderFactory.class.getName())
                    .getDeclaredConstructor().newInstance();
            Class<?> scopeType = keycloak.loadClass("org.keycloak.Config$Scope");
            Object scope = keycloak.loadClass("org.keycloak.Config").getMethod("scope", String[].class)
                    .invoke(null, (Object) new String[] {"user-sessions", PreloadingUserSessionProviderFactory.PROVIDER_ID});

            assertThat(factory.getClass().getMethod("getId").invoke(factory)).isEqualTo("offline-preload");
            assertThat(factory.getClass().getMethod("isSupported", scopeType).invoke(factory, scope)).isEqualTo(false);

            Object indexes = keycloak.loadClass("dev.offlinepreload.schema.IndexChangelogProviderFactory")
                    .getDeclaredConstructor().newInstance();
            assertThat(indexes.getClass().getMethod("isSupported", scopeType).invoke(indexes, scope)).isEqualTo(false);
        }
    }

    @Test
    void theSameLoaderWithTheInternalsLetsTheJarIn() throws Exception {
        try (URLClassLoader keycloak = loader(entry -> true)) {
            Object factory = keycloak.loadClass(PreloadingUserSessionProviderFactory.class.getName())
                    .getDeclaredConstructor().newInstance();
            Class<?> scopeType = keycloak.loadClass("org.keycloak.Config$Scope");
            Object scope = keycloak.loadClass("org.keycloak.Config").getMethod("scope", String[].class)
                    .invoke(null, (Object) new String[] {"user-sessions", PreloadingUserSessionProviderFactory.PROVIDER_ID});

            assertThat(factory.getClass().getMethod("isSupported", scopeType).invoke(factory, scope)).isEqualTo(true);
        }
    }

    private static URLClassLoader withoutSessionInternals() {
        return loader(entry -> !entry.contains("keycloak-model-infinispan") && !entry.contains(
                File.separator + "org" + File.separator + "infinispan" + File.separator));
    }

    /** The test class path (surefire passes it in a property), filtered, under the platform loader only. */
    private static URLClassLoader loader(Predicate<String> keep) {
        String path = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        URL[] urls = Arrays.stream(path.split(File.pathSeparator)).filter(keep).map(FactoryIsolationTest::url)
                .toArray(URL[]::new);
        return new URLClassLoader(urls, ClassLoader.getPlatformClassLoader());
    }

    private static URL url(String entry) {
        try {
            return new File(entry).toURI().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(entry, e);
        }
    }
}
