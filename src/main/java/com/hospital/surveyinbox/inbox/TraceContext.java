package com.hospital.surveyinbox.inbox;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import java.util.HashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

/**
 * The W3C {@code traceparent} of the span current on this thread: what a row stores at reception so that each of
 * its events carries it (the record's {@code traceparent} header, routes/inbox-publish.camel.yaml) and the worker
 * continues the reception's trace, also after a redelivery or a requeue. Null without tracing or outside a span.
 */
@Component
public class TraceContext {

    /** No tracing (a store built by hand in a test). */
    static final TraceContext NONE = new TraceContext((Tracer) null, (Propagator) null);

    private final Tracer tracer;
    private final Propagator propagator;

    @org.springframework.beans.factory.annotation.Autowired
    public TraceContext(ObjectProvider<Tracer> tracer, ObjectProvider<Propagator> propagator) {
        this(tracer.getIfAvailable(), propagator.getIfAvailable());
    }

    private TraceContext(Tracer tracer, Propagator propagator) {
        this.tracer = tracer;
        this.propagator = propagator;
    }

    public String current() {
        Span span = tracer == null || propagator == null ? null : tracer.currentSpan();
        // an unsampled span is not recording (isNoop() true with OpenTelemetry) but its context is valid and travels
        if (span == null || span.context().traceId().isEmpty()) {
            return null;
        }
        Map<String, String> carrier = new HashMap<>(4);
        propagator.inject(span.context(), carrier, Map::put);
        return carrier.get("traceparent");
    }
}
