package dev.offlinepreload.testsuite;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import dev.offlinepreload.testsuite.cluster.TestPaths;
import org.junit.jupiter.api.Test;

/** The jar an operator drops into providers/: our classes and service files, nothing of Keycloak's. */
class ProviderJarIT {

    @Test
    void carriesNoKeycloakClasses() throws IOException {
        try (JarFile jar = new JarFile(TestPaths.providerJar().toFile())) {
            List<String> classes = jar.stream().map(JarEntry::getName).filter(n -> n.endsWith(".class")).toList();
            assertThat(classes).isNotEmpty().allMatch(n -> n.startsWith("dev/offlinepreload/"));
        }
    }

    @Test
    void registersBothFactories() throws IOException {
        try (JarFile jar = new JarFile(TestPaths.providerJar().toFile())) {
            assertThat(service(jar, "org.keycloak.models.UserSessionProviderFactory"))
                    .isEqualTo("dev.offlinepreload.PreloadingUserSessionProviderFactory");
            assertThat(service(jar, "org.keycloak.connections.jpa.entityprovider.JpaEntityProviderFactory"))
                    .isEqualTo("dev.offlinepreload.schema.IndexChangelogProviderFactory");
            assertThat(jar.getEntry("META-INF/offline-preload/offline-preload-changelog.xml")).isNotNull();
        }
    }

    private static String service(JarFile jar, String spi) throws IOException {
        JarEntry entry = jar.getJarEntry("META-INF/services/" + spi);
        assertThat(entry).as("service file for " + spi).isNotNull();
        try (InputStream in = jar.getInputStream(entry)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
    }
}
