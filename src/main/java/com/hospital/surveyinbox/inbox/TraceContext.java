package com.hospital.surveyinbox.inbox;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
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
    static final TraceContext NONE = new TraceContext((Tracer) null);

    private final Tracer tracer;

    @org.springframework.beans.factory.annotation.Autowired
    public TraceContext(ObjectProvider<Tracer> tracer) {
        this(tracer.getIfAvailable());
    }

    private TraceContext(Tracer tracer) {
        this.tracer = tracer;
    }

    public String current() {
        Span span = tracer == null ? null : tracer.currentSpan();
        // an unsampled span is not recording (isNoop() true with OpenTelemetry) but its context is valid and travels
        if (span == null || span.context().traceId().isEmpty()) {
            return null;
        }
        // W3C traceparent, version 00 (what the propagator writes, without its map and its other fields)
        return "00-" + span.context().traceId() + "-" + span.context().spanId()
                + (Boolean.TRUE.equals(span.context().sampled()) ? "-01" : "-00");
    }
}
