package com.hospital.surveyinbox.processing;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.camel.Exchange;
import org.apache.camel.ProducerTemplate;
import org.springframework.context.annotation.Lazy;
import org.springframework.stereotype.Component;

/**
 * Calls one downstream API through its route in {@code routes/inbox-register.camel.yaml} (where the
 * endpoint, method and path live, and each HTTP step has an id). Every call starts from a fresh exchange
 * carrying only the headers meant for the downstream, so nothing of the inbound request can leak.
 * Transport failures become {@link SystemException}; HTTP answers, whatever their status, are returned.
 */
@Component
public class DownstreamClient {

    private final ProducerTemplate producer;
    private final MeterRegistry meters;
    private final DownstreamCircuits circuits;

    public DownstreamClient(@Lazy ProducerTemplate producer, MeterRegistry meters, DownstreamCircuits circuits) {
        this.producer = producer;
        this.meters = meters;
        this.circuits = circuits;
    }

    /**
     * @param call       the route's direct endpoint name, e.g. {@code legacy-patient}
     * @param downstream legacy, account or survey (metrics, error attribution)
     * @param pathValues values the route puts into its path or query; URL-encoded here
     * @param headers    HTTP headers to send (e.g. Idempotency-Key)
     * @param jsonBody   request body or null
     */
    public DownstreamResponse call(String call, String downstream, Map<String, String> pathValues,
                                   Map<String, String> headers, String jsonBody) {
        Timer.Sample sample = Timer.start(meters);
        String outcome = "error";
        try {
            Exchange result = producer.send("direct:" + call, exchange -> {
                pathValues.forEach((k, v) -> exchange.setProperty(k, URLEncoder.encode(v, StandardCharsets.UTF_8).replace("+", "%20")));
                exchange.getMessage().setHeader("Accept", "application/json");
                if (jsonBody != null) {
                    exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, "application/json");
                    exchange.getMessage().setBody(jsonBody);
                }
                headers.forEach((k, v) -> exchange.getMessage().setHeader(k, v));
            });
            if (result.getException() != null) {
                circuits.recordFailure(downstream);
                meters.counter("adapter.downstream.errors", "call", call, "kind", "transport").increment();
                throw new SystemException(downstream, call + " failed: " + result.getException().getClass().getSimpleName(),
                        result.getException());
            }
            Integer status = result.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE, Integer.class);
            if (status == null) {
                throw new SystemException(downstream, call + " returned no HTTP status", null);
            }
            String body = result.getMessage().getBody(String.class);
            outcome = Integer.toString(status / 100) + "xx";
            if (status >= 500) {
                circuits.recordFailure(downstream);
                meters.counter("adapter.downstream.errors", "call", call, "kind", "5xx").increment();
            } else {
                circuits.recordSuccess(downstream);
            }
            return new DownstreamResponse(status, body);
        } finally {
            sample.stop(meters.timer("adapter.downstream.calls", "call", call, "outcome", outcome));
        }
    }
}
