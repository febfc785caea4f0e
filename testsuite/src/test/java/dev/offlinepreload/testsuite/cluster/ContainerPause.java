package dev.offlinepreload.testsuite.cluster;

import static org.awaitility.Awaitility.await;

import java.time.Duration;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.InternalServerErrorException;
import org.testcontainers.DockerClientFactory;

/**
 * Freezes and thaws a container (docker pause/unpause: the cgroup freezer), as a node or a database that stops
 * answering without closing its connections. On a busy host the kernel's freezer can fail to reach "frozen" in the
 * time runc gives it ("OCI runtime pause failed: unable to freeze"); runc then thaws the container again, so the
 * pause is simply tried again (a CI run on 2 cores with two cluster classes at a time failed on it once).
 */
final class ContainerPause {

    private ContainerPause() {
    }

    static void pause(String containerId) {
        DockerClient docker = DockerClientFactory.lazyClient();
        await("docker pause " + containerId).atMost(Duration.ofSeconds(60)).pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofSeconds(1))
                .ignoreExceptionsMatching(e -> e instanceof InternalServerErrorException
                        && String.valueOf(e.getMessage()).contains("unable to freeze"))
                .until(() -> {
                    if (!Boolean.TRUE.equals(docker.inspectContainerCmd(containerId).exec().getState().getPaused())) {
                        docker.pauseContainerCmd(containerId).exec();
                    }
                    return true;
                });
    }

    static void unpause(String containerId) {
        DockerClientFactory.lazyClient().unpauseContainerCmd(containerId).exec();
    }
}
