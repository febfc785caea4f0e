package dev.offlinepreload.testsuite.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * The images the tests run. docker/images.sh picks the official images when they can be pulled and otherwise builds
 * local equivalents (no registry needed); this class then bakes the provider jar into the Keycloak image with the
 * same Dockerfile docker-compose uses, running {@code kc.sh build} once per distinct jar and base image.
 */
public final class Images {

    private static String keycloak;
    private static String postgres;
    private static String mariadb;
    private static final Map<String, String> keycloakWithProvider = new HashMap<>();

    private Images() {
    }

    public static synchronized String postgres() {
        resolveBaseImages();
        return postgres;
    }

    public static synchronized String mariadb() {
        if (mariadb == null) {
            mariadb = require(runImagesScript(Map.of(), "mariadb"), "MARIADB_IMAGE");
        }
        return mariadb;
    }

    public static synchronized String keycloak() {
        resolveBaseImages();
        return keycloak;
    }

    /** Keycloak of another version (e.g. 24.0.5 for a comparison): official if pullable, else built locally. */
    public static synchronized String keycloak(String version) {
        return require(runImagesScript(Map.of("KEYCLOAK_VERSION", version)), "KEYCLOAK_IMAGE");
    }

    /**
     * The {@code kc.sh build} options every test and benchmark node is built with (docker/keycloak-with-provider's
     * Dockerfile passes the same), for {@code db} and the extra {@code buildOptions}.
     */
    public static List<String> buildOptions(String db, String buildOptions) {
        List<String> options = new ArrayList<>(List.of("--db=" + db, "--health-enabled=true",
                "--metrics-enabled=true"));
        options.addAll(Arrays.stream(buildOptions.split(" ")).filter(o -> !o.isBlank()).toList());
        return options;
    }

    /**
     * {@code base} after {@code kc.sh build} with {@link #buildOptions} for PostgreSQL, without this provider: stock
     * Keycloak, ready for {@code start --optimized}.
     */
    public static synchronized String keycloakWithoutProvider(String base, String buildOptions) {
        String tag = "offline-preload/keycloak-stock:"
                + sha256((base + "@" + imageId(base) + " " + buildOptions).getBytes(StandardCharsets.UTF_8)).substring(0, 16);
        if (!exists(tag)) {
            new ImageFromDockerfile(tag, false)
                    .withDockerfileFromBuilder(d -> d.from(base)
                            .run("/opt/keycloak/bin/kc.sh build " + String.join(" ", buildOptions("postgres", buildOptions)))
                            .build())
                    .get();
        }
        return tag;
    }

    /**
     * The Keycloak image of {@code version} (null: the project's own) with this provider installed and built, tagged
     * by the content of its inputs.
     *
     * @param db           the database vendor Keycloak is built for (postgres, mariadb)
     * @param buildOptions extra {@code kc.sh build} options ("" for none)
     */
    public static String keycloakWithProvider(String version, String db, String buildOptions) {
        return keycloakWithProvider(TestPaths.providerJar(), version, db, buildOptions);
    }

    /**
     * The same with another build of the provider, {@code jar}: the benchmark's {@code baseline} setup, an earlier
     * commit's jar beside this one on the same nodes and data.
     */
    public static synchronized String keycloakWithProvider(Path jar, String version, String db, String buildOptions) {
        return keycloakWithProvider.computeIfAbsent(jar + " " + version + " " + db + " " + buildOptions,
                key -> buildKeycloakWithProvider(jar, version, db, buildOptions));
    }

    /** The project's Keycloak version, built for PostgreSQL. */
    public static String keycloakWithProvider(String buildOptions) {
        return keycloakWithProvider(null, "postgres", buildOptions);
    }

    private static String buildKeycloakWithProvider(Path jar, String version, String db, String buildOptions) {
        Path dockerfile = TestPaths.repoRoot().resolve("docker/keycloak-with-provider/Dockerfile");
        String base = version == null ? keycloak() : keycloak(version);
        String tag = "offline-preload/keycloak-test:"
                + sha256(read(jar), read(dockerfile),
                        (base + "@" + imageId(base) + " " + db + " " + buildOptions).getBytes(StandardCharsets.UTF_8)).substring(0, 16);
        if (!exists(tag)) {
            new ImageFromDockerfile(tag, false)
                    .withFileFromPath("Dockerfile", dockerfile)
                    .withFileFromPath("provider/target/keycloak-offline-session-preloader.jar", jar)
                    .withBuildArg("KEYCLOAK_IMAGE", base)
                    .withBuildArg("DB", db)
                    .withBuildArg("EXTRA_BUILD_OPTIONS", buildOptions)
                    .get();
        }
        return tag;
    }

    private static void resolveBaseImages() {
        if (keycloak != null) {
            return;
        }
        Map<String, String> resolved = runImagesScript(Map.of());
        keycloak = require(resolved, "KEYCLOAK_IMAGE");
        postgres = require(resolved, "POSTGRES_IMAGE");
    }

    private static Map<String, String> runImagesScript(Map<String, String> env, String... images) {
        Path script = TestPaths.repoRoot().resolve("docker/images.sh");
        try {
            List<String> command = new ArrayList<>(List.of("bash", script.toString()));
            command.addAll(List.of(images));
            ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
            builder.environment().putAll(env);
            Process process = builder.start();
            String out;
            try (InputStream stdout = process.getInputStream()) {
                out = new String(stdout.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!process.waitFor(40, TimeUnit.MINUTES) || process.exitValue() != 0) {
                throw new IllegalStateException(script + " failed (exit " + process.exitValue() + "); see its output above");
            }
            Map<String, String> values = new HashMap<>();
            out.lines().map(String::trim).filter(l -> l.contains("=")).forEach(l -> {
                int eq = l.indexOf('=');
                values.put(l.substring(0, eq), l.substring(eq + 1));
            });
            return values;
        } catch (IOException e) {
            throw new IllegalStateException("Could not run " + script, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running " + script, e);
        }
    }

    private static String require(Map<String, String> values, String key) {
        String value = values.get(key);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("docker/images.sh printed no " + key + " line");
        }
        return value;
    }

    private static boolean exists(String image) {
        try {
            DockerClientFactory.lazyClient().inspectImageCmd(image).exec();
            return true;
        } catch (RuntimeException notFound) {
            return false;
        }
    }

    private static String imageId(String image) {
        return DockerClientFactory.lazyClient().inspectImageCmd(image).exec().getId();
    }

    private static String sha256(byte[]... inputs) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (byte[] input : inputs) {
                digest.update(input);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("No SHA-256", e);
        }
    }

    private static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalStateException("Cannot read the image input " + file, e);
        }
    }
}
