package com.hospital.surveyinbox.config;

import org.apache.camel.builder.RouteBuilder;
import org.springframework.core.Ordered;
import org.springframework.stereotype.Component;

/**
 * Sets up the context's interceptors before any route of {@code routes/} is built. Camel sets up a route
 * configuration's {@code interceptSendToEndpoint} when it builds the first route that uses it, and a static
 * {@code to:} built before that keeps its plain endpoint for good. Routes are built in the order Camel reads their
 * files, which comes from a set keyed by each file's full path: another folder (a ConfigMap's mount path) reads them
 * in another order, and the replies' HTTP call went without the downstream interceptor, the reception's and replies'
 * statements without their own tries. This route, from the first builder of the context (Java builders come before
 * the route files, every route configuration before any route), is the one route that uses the configurations holding
 * the interceptors ({@code routes/inbox-downstream.camel.yaml}), so each is set up once, here; it is never called. A
 * change to those interceptors takes a restart (a reload of the files does not rebuild this route).
 * InterceptedCallsTest boots a copy of the routes from another folder and finds every call intercepted once.
 */
@Component
public class InterceptorsFirst extends RouteBuilder implements Ordered {

    /** The route configurations whose interceptors apply to every call of the context. */
    static final String INTERCEPTORS = "inbox-downstream,inbox-statement-tries";

    static final String ROUTE_ID = "inbox-interceptors-first";

    @Override
    public void configure() throws Exception {
        // a configuration renamed or dropped in routes/ would leave the interceptors off, silently: the start fails
        getContext().addStartupListener((context, alreadyStarted) -> {
            check(context);
            // the answers the routes declare before their calls: one that is wrong fails the start, not the rows
            com.hospital.surveyinbox.processing.DeclaredAnswers.check(context);
        });
        from("direct:inbox-interceptors-first")
                .routeId(ROUTE_ID)
                .routeConfigurationId(INTERCEPTORS)
                // the interceptors' steps get the error handler of the route that set them up: none, so a failure in
                // them (an open circuit's refusal) is the calling route's, handled by its own policy, not logged here
                .errorHandler(noErrorHandler())
                .routeDescription("sets up the context's interceptors before the routes of routes/ are built; never called")
                .log("inbox-interceptors-first is not meant to be called");
    }

    /**
     * Fails when the route did not get every configuration of {@link #INTERCEPTORS} (one missing from routes/), or when
     * another route names one of them: it would set that interceptor up a second time, and which of the two wraps a
     * call (its steps, its error handler) would vary from one start to the next.
     */
    static void check(org.apache.camel.CamelContext context) {
        java.util.List<String> interceptors = java.util.Arrays.asList(INTERCEPTORS.split(","));
        org.apache.camel.Route route = context.getRoute(ROUTE_ID);
        java.util.List<String> got = configurations(route);
        for (String id : interceptors) {
            if (!got.contains(id)) {
                throw new IllegalStateException("routeConfiguration " + id + " is not in routes/ (" + ROUTE_ID + " got "
                        + got + "): the calls of every route would go without its interceptor");
            }
        }
        for (org.apache.camel.Route other : context.getRoutes()) {
            if (!other.getRouteId().equals(ROUTE_ID)) {
                for (String id : configurations(other)) {
                    if (interceptors.contains(id)) {
                        throw new IllegalStateException("route " + other.getRouteId() + " names routeConfiguration " + id
                                + ": its interceptor applies to every route already (set up once by " + ROUTE_ID
                                + "); remove it from the route's routeConfigurationId");
                    }
                }
            }
        }
    }

    private static java.util.List<String> configurations(org.apache.camel.Route route) {
        String applied = route == null ? null : route.getConfigurationId();
        return applied == null ? java.util.List.of() : java.util.Arrays.stream(applied.split(",")).map(String::strip).toList();
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
