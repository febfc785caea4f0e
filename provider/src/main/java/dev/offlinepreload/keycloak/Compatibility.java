package dev.offlinepreload.keycloak;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.function.BooleanSupplier;
import java.util.jar.Manifest;

import org.keycloak.common.Version;
import org.keycloak.infinispan.util.InfinispanUtils;

/** Whether preloading can work on this node at all; a clear reason instead of an obscure failure when it cannot. */
public final class Compatibility {

    private Compatibility() {
    }

    /**
     * The version first: on another minor even asking whether session caches are in use may call a method that does
     * not exist there (useCaches() is new in 26.7).
     *
     * @return why preloading does not apply here, or null if it does
     */
    public static String whyNotApplicable(BooleanSupplier sessionCachesInUse) {
        String builtFor = builtForKeycloak();
        if (builtFor != null && !sameMinor(builtFor, Version.VERSION)) {
            return "this jar was built for Keycloak " + builtFor + " and the server is Keycloak " + Version.VERSION
                    + "; use the release built for your Keycloak version";
        }
        if (!InfinispanUtils.isEmbeddedInfinispan()) {
            return "sessions live in an external Infinispan (multi-site or clusterless setup), not in this node's caches";
        }
        if (!sessionCachesInUse.getAsBoolean()) {
            return "Keycloak keeps no session caches here (stateless setup or use-caches=false)";
        }
        return null;
    }

    /** 26.7.4 and 26.7.9 are compatible; 26.8.0 is not (internals this jar uses may have changed). */
    static boolean sameMinor(String a, String b) {
        String[] x = a.split("[.-]");
        String[] y = b.split("[.-]");
        return x.length >= 2 && y.length >= 2 && x[0].equals(y[0]) && x[1].equals(y[1]);
    }

    private static String builtForKeycloak() {
        URL self = Compatibility.class.getResource("Compatibility.class");
        if (self == null || !"jar".equals(self.getProtocol())) {
            return null; // running from classes (unit tests): nothing to compare
        }
        String manifest = self.toString().substring(0, self.toString().indexOf('!') + 1) + "/META-INF/MANIFEST.MF";
        try (InputStream in = new URL(manifest).openStream()) {
            return new Manifest(in).getMainAttributes().getValue("Keycloak-Version");
        } catch (IOException e) {
            return null;
        }
    }
}
