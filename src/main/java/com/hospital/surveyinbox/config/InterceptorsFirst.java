package com.hospital.surveyinbox.config;

import org.apache.camel.builder.RouteBuilder;
import org.springframework.core.Ordered;
import org.springframework.stereotype.Component;

/**
 * Sets up the context's interceptors before any route of {@code routes/} is built. Camel sets up a route
 * configuration's {@code interceptSendToEndpoint} when it builds the first route that uses it, and a static
 * {@code to:} built before that keeps its plain endpoint for good. Routes are built in the order their files are
 * read, which is the directory's order (a ConfigMap mount's, not alphabetical): on one pod the replies' HTTP call went
 * without the downstream interceptor, and the reception's and replies' statements without their own tries. This route,
 * from the first builder of the context (Java builders come before the route files), uses the configurations that
 * hold the interceptors ({@code routes/inbox-downstream.camel.yaml}); it is never called. InterceptedCallsTest boots
 * the routes in another order and finds every call intercepted.
 */
@Component
public class InterceptorsFirst extends RouteBuilder implements Ordered {

    /** The route configurations whose interceptors apply to every call of the context. */
    static final String INTERCEPTORS = "inbox-downstream,inbox-statement-tries";

    @Override
    public void configure() {
        from("direct:inbox-interceptors-first")
                .routeId("inbox-interceptors-first")
                .routeConfigurationId(INTERCEPTORS)
                .routeDescription("sets up the context's interceptors before the routes of routes/ are built; never called")
                .log("inbox-interceptors-first is not meant to be called");
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
