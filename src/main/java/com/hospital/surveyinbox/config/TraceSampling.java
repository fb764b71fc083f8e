package com.hospital.surveyinbox.config;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A request's {@code traceparent} asking for its trace to be recorded (the W3C sampled flag) is honoured for at most
 * {@code adapter.tracing.sender-sampled-per-second} requests a second per instance (a burst of twice that). Beyond
 * it the request goes on as if its caller had left the choice to this service: the flag is rewritten by a draw at
 * {@code management.tracing.sampling.probability} (this instance's own: the trace id is the caller's to choose),
 * the trace id and parent span kept, so the logs still name the caller's trace.
 * <p>
 * The flag is read by the request's observation (Boot's filter, ordered before Spring Security), by anyone who
 * reaches the port: honoured without a bound, a flood of unauthenticated requests (401s) each made spans for the
 * collector. Decided here, once, at the edge, before that filter: every span of the request (Camel's routes, the
 * row's processing through Kafka, the downstream calls) follows it as its parent. A caller's "not sampled" is kept;
 * a {@code traceparent} not written as the standard's version 00 (one header, lower-case hex) is taken away (a trace
 * starts here), so a lenient propagator cannot carry a flag past the bound. B3's headers ({@code b3},
 * {@code X-B3-*}: Boot's propagation reads them too, each with a sampled flag of its own) are taken away from every
 * request (callers speak W3C; the Kafka events' context, read by the same propagation, is not a request's).
 */
@Configuration(proxyBeanMethods = false)
public class TraceSampling {

    /** Version 00 traceparent: version, trace id, parent id, flags (2 hex digits). */
    private static final Pattern TRACEPARENT = Pattern.compile("00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");

    @Bean
    FilterRegistrationBean<SenderSampledBound> senderSampledBound(AdapterProperties properties,
            @Value("${management.tracing.sampling.probability:0.1}") double probability,
            io.micrometer.core.instrument.MeterRegistry meters) {
        FilterRegistrationBean<SenderSampledBound> registration = new FilterRegistrationBean<>(
                new SenderSampledBound(properties.getTracing().getSenderSampledPerSecond(), probability, meters));
        // before Boot's ServerHttpObservationFilter (HIGHEST_PRECEDENCE + 1), which reads the header
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
        return registration;
    }

    /** The filter: the request's sampled flag taken while the bound has room, redrawn otherwise. */
    static final class SenderSampledBound extends OncePerRequestFilter {

        private final TokenBucket honoured;
        private final int perSecond;
        private final double probability;

        private final io.micrometer.core.instrument.Counter overBound;
        private final io.micrometer.core.instrument.Counter malformed;
        private final io.micrometer.core.instrument.Counter b3Dropped;

        SenderSampledBound(int perSecond, double probability, io.micrometer.core.instrument.MeterRegistry meters) {
            this.overBound = dropped(meters, "over-bound");
            this.malformed = dropped(meters, "malformed");
            this.b3Dropped = dropped(meters, "b3");
            this.perSecond = perSecond;
            this.honoured = new TokenBucket(Math.max(1, 2 * perSecond), Math.max(perSecond, 1e-9));
            this.probability = probability;
        }

        /** Registered at start, so a rate over them sees a pod's first one. */
        private static io.micrometer.core.instrument.Counter dropped(io.micrometer.core.instrument.MeterRegistry meters,
                                                                     String reason) {
            return io.micrometer.core.instrument.Counter.builder("adapter.tracing.sender.context.dropped")
                    .description("requests whose caller's trace context was not taken as sent: a sampled flag over "
                            + "adapter.tracing.sender-sampled-per-second (redrawn), a traceparent not in version-00 form, "
                            + "B3 headers (dropped)")
                    .tag("reason", reason).register(meters);
        }

        @Override
        protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws ServletException, IOException {
            Enumeration<String> headers = request.getHeaders("traceparent");
            String traceparent = headers != null && headers.hasMoreElements() ? headers.nextElement() : null;
            String taken = traceparent;
            if (traceparent != null) {
                if (headers.hasMoreElements() || !TRACEPARENT.matcher(traceparent).matches()) {
                    // not one version-00 header as the standard writes it (another version, upper case, spaces, two
                    // of them): none, a trace started here; a propagator lenient with it must not carry a flag past
                    // the bound
                    taken = null;
                    malformed.increment();
                } else if ((Integer.parseInt(traceparent.substring(53), 16) & 1) == 1
                        && !(perSecond > 0 && honoured.tryTake())) {
                    taken = traceparent.substring(0, 53) + (ThreadLocalRandom.current().nextDouble() < probability ? "01" : "00");
                    overBound.increment();
                }
            }
            boolean withB3 = b3(request);
            if (withB3) {
                b3Dropped.increment();
            }
            if (java.util.Objects.equals(taken, traceparent) && !withB3) {
                chain.doFilter(request, response);
            } else {
                chain.doFilter(new Taken(request, taken), response);
            }
        }
    }

    /** Whether the request carries a B3 header. */
    static boolean b3(HttpServletRequest request) {
        Enumeration<String> names = request.getHeaderNames();
        while (names != null && names.hasMoreElements()) {
            if (b3(names.nextElement())) {
                return true;
            }
        }
        return false;
    }

    static boolean b3(String name) {
        String lower = name.toLowerCase(java.util.Locale.ROOT);
        return lower.equals("b3") || lower.startsWith("x-b3-");
    }

    /** The request with {@code traceparent} as decided (null: none) and no B3 header. */
    private static final class Taken extends HttpServletRequestWrapper {

        private final String traceparent;

        Taken(HttpServletRequest request, String traceparent) {
            super(request);
            this.traceparent = traceparent;
        }

        @Override
        public String getHeader(String name) {
            return "traceparent".equalsIgnoreCase(name) ? traceparent : b3(name) ? null : super.getHeader(name);
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            if ("traceparent".equalsIgnoreCase(name)) {
                return Collections.enumeration(traceparent == null ? List.of() : List.of(traceparent));
            }
            return b3(name) ? Collections.emptyEnumeration() : super.getHeaders(name);
        }

        @Override
        public Enumeration<String> getHeaderNames() {
            List<String> names = Collections.list(super.getHeaderNames());
            names.removeIf(name -> b3(name) || (traceparent == null && "traceparent".equalsIgnoreCase(name)));
            return Collections.enumeration(names);
        }
    }
}
