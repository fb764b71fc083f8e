package com.hospital.surveyinbox.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.TracingAwareMeterObservationHandler;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.camel.CamelContext;
import org.apache.camel.Endpoint;
import org.apache.camel.NamedNode;
import org.apache.camel.model.RouteDefinition;
import org.apache.camel.spi.RoutePolicy;
import org.apache.camel.support.EndpointHelper;
import org.apache.camel.tracing.SpanDecorator;
import org.apache.camel.tracing.decorators.AbstractSpanDecorator;
import org.apache.camel.observation.MicrometerObservationTracer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Tracing of the routes: every route and endpoint call a span of Micrometer Tracing (OpenTelemetry bridge, W3C
 * trace context), the context read from a consumed message (the reception's HTTP headers, the event's Kafka
 * headers) and written into each call (HTTP headers of the downstream calls and the reply).
 *
 * <p>camel-observation-starter 4.17 registers its tracer only when Boot's actuator observation and tracing
 * auto-configurations are absent ({@code @ConditionalOnMissingClass}), so in a service with the actuator it does
 * nothing; the tracer is registered here as the starter would, with {@code camel.observation.exclude-patterns}
 * decided once per route and endpoint ({@link ExcludingTracer}; the starter's other keys,
 * {@code camel.observation.enabled} and {@code .encoding}, are not read).
 */
@Configuration(proxyBeanMethods = false)
public class CamelTracing {

    /** Key Camel's tracer puts on the observations it starts for a route (camel-observation 4.17). */
    private static final String CAMEL_ROUTE = "camel.micrometer.abstract-internal";
    /** Name of the observations Camel's tracer starts for an endpoint call. */
    private static final String CAMEL_CALL = "camel.component";

    @Bean
    ExcludingTracer camelObservationTracer(CamelContext camel, ObjectProvider<Tracer> tracer,
                                           ObjectProvider<ObservationRegistry> observations,
                                           @Value("${camel.observation.exclude-patterns:}") String exclude) {
        ExcludingTracer routes = new ExcludingTracer(exclude);
        tracer.ifAvailable(routes::setTracer);
        observations.ifAvailable(routes::setObservationRegistry);
        routes.init(camel);
        return routes;
    }

    /**
     * Camel's tracer with {@code camel.observation.exclude-patterns} decided once per endpoint and once per route,
     * with Camel's own matching ({@code EndpointHelper.matchEndpoint}: exact, {@code *} wildcard or regex, with or
     * without {@code //}). Camel 4.17's tracer decides it on every exchange and every call (twice per call, at its
     * start and its end): it normalizes the endpoint's URI and compiles each pattern as a regular expression each
     * time — in JFR of the accept path about 4 % of the request threads' CPU and 10 % of the publish threads'.
     * An excluded route gets no tracing policy at all; an excluded endpoint's call gets a decorator that starts no
     * span. The decision is kept per endpoint object (bounded: dynamic {@code toD} endpoints come and go).
     */
    public static final class ExcludingTracer extends MicrometerObservationTracer {

        static final int DECIDED_AT_MOST = 1_000;
        /** A call to an excluded endpoint: the tracer's event notifier starts and ends no span for it. */
        private static final SpanDecorator NO_SPAN = new AbstractSpanDecorator() {
            @Override
            public String getComponent() {
                return "excluded";
            }

            @Override
            public String getComponentClassName() {
                return null;
            }

            @Override
            public boolean newSpan() {
                return false;
            }
        };

        private final List<String> patterns;
        private final Map<Endpoint, SpanDecorator> decided = new ConcurrentHashMap<>();

        ExcludingTracer(String excludePatterns) {
            this.patterns = Arrays.stream(excludePatterns.split(",")).map(String::trim).filter(p -> !p.isEmpty()).toList();
        }

        /** Whether a route or call with this URI makes no span (placeholders resolved as Camel does). */
        public boolean excluded(String uri) {
            return patterns.stream().anyMatch(pattern -> EndpointHelper.matchEndpoint(getCamelContext(), uri, pattern));
        }

        @Override
        protected SpanDecorator getSpanDecorator(Endpoint endpoint) {
            SpanDecorator decorator = decided.get(endpoint);
            if (decorator == null) {
                decorator = excluded(endpoint.getEndpointUri()) ? NO_SPAN : super.getSpanDecorator(endpoint);
                if (decided.size() >= DECIDED_AT_MOST) {
                    decided.clear();
                }
                decided.put(endpoint, decorator);
            }
            return decorator;
        }

        @Override
        public RoutePolicy createRoutePolicy(CamelContext camelContext, String routeId, NamedNode route) {
            RoutePolicy policy = super.createRoutePolicy(camelContext, routeId, route);
            return route instanceof RouteDefinition definition && definition.getInput() != null
                    && definition.getInput().getEndpointUri() != null
                    && excluded(definition.getInput().getEndpointUri()) ? null : policy;
        }
    }

    /**
     * Timers for Boot's observations (http_server_requests, with exemplars) as Boot would make them, none for
     * Camel's spans: each would add a timer per route and call name beside the route timers camel-micrometer
     * keeps, at a cost on every step. Replaces Boot's handler, which backs off for this bean;
     * {@code management.observations.long-task-timer.enabled} is honoured as Boot does.
     */
    @Bean
    MeterObservationHandler<Observation.Context> meterObservationHandler(MeterRegistry meters, ObjectProvider<Tracer> tracer,
                                                                         ObservationProperties properties) {
        DefaultMeterObservationHandler.IgnoredMeters[] ignored = properties.getLongTaskTimer().isEnabled()
                ? new DefaultMeterObservationHandler.IgnoredMeters[0]
                : new DefaultMeterObservationHandler.IgnoredMeters[] {DefaultMeterObservationHandler.IgnoredMeters.LONG_TASK_TIMER};
        MeterObservationHandler<Observation.Context> timers = new DefaultMeterObservationHandler(meters, ignored);
        Tracer current = tracer.getIfAvailable();
        MeterObservationHandler<Observation.Context> boots = current == null ? timers
                : new TracingAwareMeterObservationHandler<>(timers, current);
        return new MeterObservationHandler<>() {
            @Override
            public void onStart(Observation.Context context) {
                boots.onStart(context);
            }

            @Override
            public void onError(Observation.Context context) {
                boots.onError(context);
            }

            @Override
            public void onEvent(Observation.Event event, Observation.Context context) {
                boots.onEvent(event, context);
            }

            @Override
            public void onScopeOpened(Observation.Context context) {
                boots.onScopeOpened(context);
            }

            @Override
            public void onScopeClosed(Observation.Context context) {
                boots.onScopeClosed(context);
            }

            @Override
            public void onScopeReset(Observation.Context context) {
                boots.onScopeReset(context);
            }

            @Override
            public void onStop(Observation.Context context) {
                boots.onStop(context);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return !CAMEL_CALL.equals(context.getName()) && !context.containsKey(CAMEL_ROUTE)
                        && boots.supportsContext(context);
            }
        };
    }
}
