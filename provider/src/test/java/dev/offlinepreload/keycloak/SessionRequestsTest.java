package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.keycloak.models.KeycloakSession;
import org.keycloak.provider.Provider;

class SessionRequestsTest {

    private final SessionRequests requests = new SessionRequests();
    private final List<Provider> enlisted = new ArrayList<>();

    /** A Keycloak session that only remembers what is enlisted for its close. */
    private KeycloakSession session() {
        return (KeycloakSession) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {KeycloakSession.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("enlistForClose")) {
                        enlisted.add((Provider) args[0]);
                        return null;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private void closeAll() {
        enlisted.forEach(Provider::close);
        enlisted.clear();
    }

    @Test
    void aSessionCountsFromItsProviderUntilItCloses() {
        assertThat(requests.busy()).isZero();
        requests.begin(session());
        requests.begin(session());
        assertThat(requests.busy()).isEqualTo(2);
        assertThat(requests.busy()).as("still at work").isEqualTo(2);
        closeAll();
        assertThat(requests.busy()).isZero();
    }

    @Test
    void aRequestThatBeganAndEndedBetweenTwoLooksIsSeenOnce() {
        requests.begin(session());
        closeAll();
        assertThat(requests.busy()).isEqualTo(1);
        assertThat(requests.busy()).isZero();
    }

    @Test
    void theLoadersOwnSessionsAreNotCounted() throws InterruptedException {
        Thread worker = new Thread(() -> requests.begin(session()), SessionRequests.OWN_THREADS + "1-worker-1");
        worker.start();
        worker.join();
        assertThat(requests.busy()).isZero();
        assertThat(enlisted).isEmpty();
    }
}
