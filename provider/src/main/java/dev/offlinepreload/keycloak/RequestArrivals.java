package dev.offlinepreload.keycloak;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.container.PreMatching;
import jakarta.ws.rs.ext.Provider;

/**
 * Sees every request to Keycloak's HTTP endpoints as it arrives, before Keycloak matches it to a resource or opens a
 * session for it, and again once its response is ready: adaptive-load's signal, and how long each request took for the
 * revocation check's ({@link RequestsAtWork}). On a node
 * that has just started, a token refresh takes a second or more from its arrival to its first use of the user-session
 * provider; counted here, the load stops within a governor tick of the first request. Health and metrics are served on
 * the management interface, outside JAX-RS, so probes and scrapes are not counted. Keycloak (24 and later) registers
 * JAX-RS providers found in a provider jar at {@code kc.sh build}; the jar's {@code META-INF/beans.xml} puts it in the
 * index that the build reads.
 */
@Provider
@PreMatching
public class RequestArrivals implements ContainerRequestFilter, ContainerResponseFilter {

    /** The request's property holding its arrival ({@link System#nanoTime()}), set once it is counted. */
    private static final String ARRIVED = RequestArrivals.class.getName();

    @Override
    public void filter(ContainerRequestContext request) {
        request.setProperty(ARRIVED, System.nanoTime());
        RequestsAtWork.arrived();
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        // Once per request, whatever filters or error handling ran in between.
        if (request.getProperty(ARRIVED) instanceof Long arrived) {
            request.removeProperty(ARRIVED);
            RequestsAtWork.finished(arrived);
        }
    }
}
