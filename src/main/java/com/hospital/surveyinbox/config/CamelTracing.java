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
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.camel.CamelContext;
import org.apache.camel.Endpoint;
import org.apache.camel.NamedNode;
import org.apache.camel.Exchange;
import org.apache.camel.Route;
import org.apache.camel.spi.RoutePolicy;
import org.apache.camel.support.EndpointHelper;
import org.apache.camel.tracing.SpanDecorator;
import org.apache.camel.tracing.decorators.AbstractSpanDecorator;
import org.apache.camel.observation.MicrometerObservationTracer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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
     * Camel's tracer with {@code camel.observation.exclude-patterns} decided once per route and once per static
     * endpoint, with Camel's own matching ({@code EndpointHelper.matchEndpoint}: placeholders resolved, exact,
     * {@code *} wildcard or regex, with or without {@code //}). Camel 4.17's tracer decides it on every exchange and
     * every call (twice per call, at its start and its end): it normalizes the endpoint's URI and compiles each
     * pattern as a regular expression each time — in JFR of the accept path about 4 % of the request threads' CPU
     * and 10 % of the publish threads'.
     *
     * <p>A route and a call are decided by the same rule, on the live endpoint: an excluded call gets a decorator
     * that starts no span; an excluded route's tracing policy is switched off when the route is initialised
     * ({@link DecidedPolicy}). Only endpoints Camel keeps as static are remembered (at most
     * {@value #DECIDED_AT_MOST}): a dynamic endpoint is decided on each call, as Camel does, and never held here
     * after Camel's own cache lets it go. A URI that cannot be decided is traced (and said once).
     */
    public static final class ExcludingTracer extends MicrometerObservationTracer {

        private static final Logger LOG = LoggerFactory.getLogger(ExcludingTracer.class);
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

        private final String excludePatterns;
        private final List<String> patterns;
        private final Map<Endpoint, SpanDecorator> decided = new ConcurrentHashMap<>();
        private final AtomicBoolean undecidableSaid = new AtomicBoolean();

        ExcludingTracer(String excludePatterns) {
            this.excludePatterns = excludePatterns;
            this.patterns = Arrays.stream(excludePatterns.split(",")).map(String::trim).filter(p -> !p.isEmpty()).toList();
            LOG.info("Camel routes and calls without spans (camel.observation.exclude-patterns): {}", patterns);
        }

        /** The patterns in force (Camel's JMX attribute of the same name). */
        @Override
        public String getExcludePatterns() {
            return excludePatterns;
        }

        /**
         * Ignored: the patterns are this tracer's, from {@code camel.observation.exclude-patterns} at startup. Camel's
         * setter would switch its per-exchange matching back on beside them and this getter would not show it.
         */
        @Override
        public void setExcludePatterns(String excludePatterns) {
            LOG.warn("exclude-patterns are taken once from camel.observation.exclude-patterns; ignored: {}", excludePatterns);
        }

        /** Whether a route or call with this URI makes no span; a URI that cannot be decided makes spans. */
        public boolean excluded(String uri) {
            if (uri == null) {
                return false;
            }
            try {
                return patterns.stream().anyMatch(pattern -> EndpointHelper.matchEndpoint(getCamelContext(), uri, pattern));
            } catch (RuntimeException e) {
                if (undecidableSaid.compareAndSet(false, true)) {
                    LOG.warn("exclude-patterns could not be applied to an endpoint; it is traced: {}", e.toString());
                }
                return false;
            }
        }

        /** How many endpoints' decisions are remembered (static endpoints only, at most {@value #DECIDED_AT_MOST}). */
        public int remembered() {
            return decided.size();
        }

        /** The decorator of a call: one that starts no span for an excluded endpoint, else Camel's. */
        public SpanDecorator decorator(Endpoint endpoint) {
            return getSpanDecorator(endpoint);
        }

        @Override
        protected SpanDecorator getSpanDecorator(Endpoint endpoint) {
            SpanDecorator decorator = decided.get(endpoint);
            if (decorator == null) {
                String uri = endpoint.getEndpointUri();
                decorator = excluded(uri) ? NO_SPAN : super.getSpanDecorator(endpoint);
                if (uri != null && decided.size() < DECIDED_AT_MOST && getCamelContext().getEndpointRegistry().isStatic(uri)) {
                    decided.put(endpoint, decorator);
                }
            }
            return decorator;
        }

        @Override
        public RoutePolicy createRoutePolicy(CamelContext camelContext, String routeId, NamedNode route) {
            return new DecidedPolicy(super.createRoutePolicy(camelContext, routeId, route));
        }

        /** Camel's tracing policy of one route, on only if the route's endpoint is not excluded (decided at its init). */
        public final class DecidedPolicy implements RoutePolicy {
            private final RoutePolicy traced;
            private volatile boolean on = true;

            DecidedPolicy(RoutePolicy traced) {
                this.traced = traced;
            }

            /** Whether this route's exchanges make spans. */
            public boolean on() {
                return on;
            }

            @Override
            public void onInit(Route route) {
                on = decorator(route.getEndpoint()) != NO_SPAN;
                traced.onInit(route);
            }

            @Override
            public void onRemove(Route route) {
                traced.onRemove(route);
            }

            @Override
            public void onStart(Route route) {
                traced.onStart(route);
            }

            @Override
            public void onStop(Route route) {
                traced.onStop(route);
            }

            @Override
            public void onSuspend(Route route) {
                traced.onSuspend(route);
            }

            @Override
            public void onResume(Route route) {
                traced.onResume(route);
            }

            @Override
            public void onExchangeBegin(Route route, Exchange exchange) {
                if (on) {
                    traced.onExchangeBegin(route, exchange);
                }
            }

            @Override
            public void onExchangeDone(Route route, Exchange exchange) {
                if (on) {
                    traced.onExchangeDone(route, exchange);
                }
            }
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
