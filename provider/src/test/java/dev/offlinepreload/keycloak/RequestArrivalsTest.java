package dev.offlinepreload.keycloak;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;

import jakarta.ws.rs.container.ContainerRequestContext;

import dev.offlinepreload.load.RequestWatch;
import org.junit.jupiter.api.Test;

class RequestArrivalsTest {

    private final RequestArrivals filter = new RequestArrivals();
    private final RequestsAtWork requests = new RequestsAtWork();

    /** A request context that only keeps its properties, as JAX-RS does for one request. */
    private static ContainerRequestContext request() {
        Map<String, Object> properties = new HashMap<>();
        return (ContainerRequestContext) Proxy.newProxyInstance(RequestArrivalsTest.class.getClassLoader(),
                new Class<?>[] {ContainerRequestContext.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "setProperty" -> properties.put((String) args[0], args[1]);
                    case "getProperty" -> properties.get((String) args[0]);
                    case "removeProperty" -> properties.remove((String) args[0]);
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void aRequestCountsFromItsArrivalUntilItsResponse() {
        assertThat(requests.busy()).isZero();
        ContainerRequestContext first = request();
        ContainerRequestContext second = request();
        filter.filter(first);
        filter.filter(second);
        assertThat(requests.busy()).isEqualTo(2);
        assertThat(requests.busy()).as("still at work").isEqualTo(2);
        filter.filter(first, null);
        assertThat(requests.busy()).isEqualTo(1);
        filter.filter(second, null);
        assertThat(requests.busy()).isZero();
    }

    @Test
    void aRequestThatArrivedAndWasAnsweredBetweenTwoLooksIsSeenOnce() {
        assertThat(requests.busy()).isZero();
        ContainerRequestContext request = request();
        filter.filter(request);
        filter.filter(request, null);
        assertThat(requests.busy()).isEqualTo(1);
        assertThat(requests.busy()).isZero();
    }

    @Test
    void aResponseEndsOnlyARequestThatWasCountedAndOnlyOnce() {
        ContainerRequestContext counted = request();
        filter.filter(counted);
        filter.filter(request(), null); // a response whose request this filter never saw arrive
        filter.filter(counted, null);
        filter.filter(counted, null); // the response filters run again for the same request
        requests.busy();
        assertThat(requests.busy()).as("no count left over, none below zero").isZero();
        filter.filter(counted = request());
        requests.busy();
        assertThat(requests.busy()).isEqualTo(1);
        filter.filter(counted, null);
        assertThat(requests.busy()).isZero();
    }

    @Test
    void aRequestAnsweredLaterThanTheSlowBoundIsSeenOnceAsSlow() throws InterruptedException {
        requests.slow();
        ContainerRequestContext quick = request();
        filter.filter(quick);
        filter.filter(quick, null);
        assertThat(requests.slow()).as("answered at once").isZero();
        ContainerRequestContext queued = request();
        filter.filter(queued);
        Thread.sleep(RequestWatch.SLOW_MILLIS + 50);
        assertThat(requests.slow()).as("still at work: not slow until it is answered").isZero();
        filter.filter(queued, null);
        assertThat(requests.slow()).isEqualTo(1);
        assertThat(requests.slow()).as("seen once").isZero();
    }
}
