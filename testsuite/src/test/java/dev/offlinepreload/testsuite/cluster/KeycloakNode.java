package dev.offlinepreload.testsuite.cluster;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * One Keycloak node: production mode from an image built with this provider ({@code start --optimized}), joined to
 * the others through the default jdbc-ping stack on the shared database.
 */
public final class KeycloakNode extends GenericContainer<KeycloakNode> {

    public static final int HTTP_PORT = 8080;
    public static final int MANAGEMENT_PORT = 9000;

    private final String name;
    private final NodeLog log;
    private int incarnation;
    private int readinessPort = MANAGEMENT_PORT;
    /** The line after which the node serves requests, ready or not (see {@link #awaitServing}). */
    private final String servingLine;

    /** @param keycloakVersion the Keycloak version of {@code image}, or null for the project's own */
    KeycloakNode(String image, String keycloakVersion, String name, Network network, Map<String, String> env, NodeLog log) {
        super(image);
        this.name = name;
        this.log = log;
        this.servingLine = servingLine(keycloakVersion);
        withNetwork(network);
        withNetworkAliases(name);
        withExposedPorts(HTTP_PORT, MANAGEMENT_PORT);
        withEnv(env);
        withEnv("KC_SPI_CACHE_EMBEDDED__DEFAULT__NODE_NAME", name);
        withCommand("start", "--optimized");
        withLogConsumer(log);
        startupTimeout(Duration.ofMinutes(5));
    }

    /**
     * Keycloak 26.7 bootstraps after Quarkus has started and logs "Bootstrap completed"; 26.5 and older bootstrap
     * while Quarkus starts, so "Listening on" is the line there.
     */
    private static String servingLine(String keycloakVersion) {
        if (keycloakVersion == null) {
            return "Bootstrap completed";
        }
        String[] parts = keycloakVersion.split("\\.");
        int major = Integer.parseInt(parts[0]);
        int minor = Integer.parseInt(parts[1]);
        return major > 26 || major == 26 && minor >= 7 ? "Bootstrap completed" : "Listening on:";
    }

    /**
     * How long {@link #start()} waits for readiness. Testcontainers does not notice a container killed meanwhile, so
     * a test that kills a node while it starts shortens this first.
     */
    public void startupTimeout(Duration timeout) {
        waitingFor(Wait.forHttp("/health/ready").forPort(readinessPort).forStatusCode(200).withStartupTimeout(timeout));
    }

    /** The port /health/ready answers on (see {@link KeycloakCluster.Builder#readinessPort}). */
    void readinessPort(int port) {
        this.readinessPort = port;
        startupTimeout(Duration.ofMinutes(5));
    }

    public String name() {
        return name;
    }

    /** Base URL of the HTTP listener as seen from the test JVM. */
    public String url() {
        return "http://" + getHost() + ":" + getMappedPort(HTTP_PORT);
    }

    /** Base URL of the management interface (health, metrics). */
    public String managementUrl() {
        return "http://" + getHost() + ":" + getMappedPort(MANAGEMENT_PORT);
    }

    public NodeLog log() {
        return log;
    }

    /** The member count of the last cluster view this node logged. */
    public int viewSize() {
        return log.viewSize();
    }

    @Override
    public void start() {
        log.newIncarnation(name + " start #" + (++incarnation));
        super.start();
    }

    /**
     * Starts the node in the background; the future completes once it is ready. From the moment this returns,
     * {@link #awaitLogLine} reads the new container's log only, never a line of an earlier start.
     */
    public CompletableFuture<Void> startInBackground() {
        log.newIncarnation(name + " start #" + (++incarnation));
        return CompletableFuture.runAsync(super::start);
    }

    /** Changes a setting for the node's next start (e.g. a shorter join timeout). */
    /** Sets an env var for the next start; {@code null} removes it. */
    public void setEnv(String key, String value) {
        if (value == null) {
            getEnvMap().remove(key);
        } else {
            withEnv(key, value);
        }
    }

    /** Waits until the node's current container has logged a line containing {@code text}. */
    public String awaitLogLine(String text, Duration timeout) {
        return await(name + " logs '" + text + "'").atMost(timeout).pollInterval(Duration.ofMillis(100))
                .until(() -> log.linesSinceStart().stream().filter(l -> l.contains(text)).findFirst().orElse(null),
                        Objects::nonNull);
    }

    /** Waits until the node's current container serves requests, ready or not (see {@link #servingLine}). */
    public void awaitServing(Duration timeout) {
        awaitLogLine(servingLine, timeout);
    }

    /** The line the node logs once Keycloak's bootstrap has completed, just before it reports ready. */
    public String servingLine() {
        return servingLine;
    }

    /**
     * Starts the node and kills it (SIGKILL) as soon as its log shows {@code text}, e.g. in the middle of its load;
     * returns once the killed container is gone. The others find out through failure detection.
     */
    public void startAndKillOn(String text) {
        // The node usually gets ready before it logs the text, and start() returns then. Where it logs it first, start()
        // fails only at this timeout after the kill, so it is the log wait's and not the default 5 min; never less:
        // 45 s once ended a start on a busy machine before the node was ready (Testcontainers then removes the
        // container, and the text never came).
        Duration timeout = Duration.ofMinutes(3);
        startupTimeout(timeout);
        CompletableFuture<Void> starting = startInBackground();
        awaitLogLine(text, timeout);
        kill();
        starting.exceptionally(killedBeforeReady -> null).join();
        startupTimeout(Duration.ofMinutes(5));
        stop(); // remove the dead container
    }

    /** SIGKILL: no shutdown hooks, no graceful leave; the others find out through failure detection. */
    public void kill() {
        DockerClientFactory.lazyClient().killContainerCmd(getContainerId()).withSignal("KILL").exec();
    }

    /** SIGTERM, and returns at once: the node shuts down as an orchestrator would make it. */
    public void terminate() {
        DockerClientFactory.lazyClient().killContainerCmd(getContainerId()).withSignal("TERM").exec();
    }

    /** Whether the node's current container is still running (false once it has exited by itself). */
    public boolean containerRunning() {
        Boolean running = DockerClientFactory.lazyClient().inspectContainerCmd(getContainerId()).exec().getState().getRunning();
        return Boolean.TRUE.equals(running);
    }

    public void pause() {
        ContainerPause.pause(getContainerId());
    }

    public void unpause() {
        ContainerPause.unpause(getContainerId());
    }

    /**
     * SIGQUIT to the node's JVM (kc.sh starts it as a child, not as PID 1; the pattern does not match the shell that
     * sends it): a thread dump in the node's log, and with {@code -XX:+PrintClassHistogram} a class histogram.
     */
    public void threadDump() {
        try {
            execInContainer("sh", "-c",
                    "for p in /proc/[0-9]*; do grep -qa '[j]ava' $p/cmdline 2>/dev/null && kill -QUIT ${p#/proc/}; done");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A fresh container from the same image and settings: a node restart as an orchestrator would do it. */
    public void restart() {
        stopGracefully();
        start();
    }

    /** Stops the node gracefully and starts it again from another image: an upgrade as an orchestrator rolls it out. */
    public void upgradeTo(String image) {
        stopGracefully();
        setDockerImageName(image);
        start();
    }

    /**
     * SIGTERM and up to 30 s for Keycloak's own shutdown (it leaves the cluster and removes its discovery row), then
     * the container is removed. Testcontainers' plain {@link #stop()} sends SIGKILL.
     */
    public void stopGracefully() {
        if (isRunning()) {
            DockerClientFactory.lazyClient().stopContainerCmd(getContainerId()).withTimeout(30).exec();
        }
        stop();
    }
}
