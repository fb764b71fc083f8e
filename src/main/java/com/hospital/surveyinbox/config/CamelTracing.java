package com.hospital.surveyinbox.config;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.TracingAwareMeterObservationHandler;
import org.apache.camel.CamelContext;
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
 * (the starter's other keys, {@code camel.observation.enabled} and {@code .encoding}, are not read).
 */
@Configuration(proxyBeanMethods = false)
public class CamelTracing {

    /** Key Camel's tracer puts on the observations it starts for a route (camel-observation 4.17). */
    private static final String CAMEL_ROUTE = "camel.micrometer.abstract-internal";
    /** Name of the observations Camel's tracer starts for an endpoint call. */
    private static final String CAMEL_CALL = "camel.component";

    @Bean
    MicrometerObservationTracer camelObservationTracer(CamelContext camel, ObjectProvider<Tracer> tracer,
                                                       ObjectProvider<ObservationRegistry> observations,
                                                       @Value("${camel.observation.exclude-patterns:}") String exclude) {
        MicrometerObservationTracer routes = new MicrometerObservationTracer();
        tracer.ifAvailable(routes::setTracer);
        observations.ifAvailable(routes::setObservationRegistry);
        if (!exclude.isBlank()) {
            routes.setExcludePatterns(exclude);
        }
        routes.init(camel);
        return routes;
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
