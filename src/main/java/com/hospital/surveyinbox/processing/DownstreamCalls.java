package com.hospital.surveyinbox.processing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.config.LoggedFailure;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangePropertyKey;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * What every downstream HTTP step of the registration gets without a line of Java, through the
 * {@code routeConfiguration} {@code inbox-downstream} ({@code routes/inbox-downstream.camel.yaml}):
 * <ul>
 *   <li>{@link #before}: which downstream the endpoint is (by base URL), its circuit (open = the call is
 *       not made: {@link CircuitOpenException}; half-open, only its trials), a timer;</li>
 *   <li>{@link #after}: the circuit learns the downstream answered, the timer stops, and the answer's
 *       headers are dropped so nothing of one call is sent on the next;</li>
 *   <li>{@link #classify}: an exception of the flow as an {@link Outcome} — 4xx with {@code {code,message}}
 *       is a business error with that message; 5xx, timeouts, refused connections and anything else a
 *       system error, charged; a call the circuit refused defers the row uncharged.</li>
 * </ul>
 * Which statuses a step accepts is the step's {@code okStatusCodeRange} in YAML; anything else throws and
 * comes here. The timer and error metrics are tagged {@code call} with the enclosing {@code step} id.
 */
@Component("downstreamCalls")
public class DownstreamCalls {

    private static final Logger log = LoggerFactory.getLogger(DownstreamCalls.class);
    static final String DOWNSTREAM = "downstream";
    /** The call's name, taken before the call: a failing {@code step} clears its own id on the way out. */
    static final String CALL = "downstreamCall";
    private static final String STARTED = "downstreamStartedNanos";

    private final AdapterProperties properties;
    private final DownstreamCircuits circuits;
    private final MeterRegistry meters;
    private final ObjectMapper mapper;

    public DownstreamCalls(AdapterProperties properties, DownstreamCircuits circuits, MeterRegistry meters,
                           ObjectMapper mapper) {
        this.properties = properties;
        this.circuits = circuits;
        this.meters = meters;
        this.mapper = mapper;
    }

    /** Before an HTTP step: name the downstream, refuse the call while its circuit is open, start the timer. */
    public void before(Exchange exchange) {
        String uri = exchange.getProperty(ExchangePropertyKey.INTERCEPTED_ENDPOINT, String.class);
        String downstream = downstreamOf(uri);
        exchange.setProperty(DOWNSTREAM, downstream);
        String step = exchange.getProperty(ExchangePropertyKey.STEP_ID, String.class);
        exchange.setProperty(CALL, step != null ? step : downstream);
        if (!circuits.admit(downstream)) {
            throw new CircuitOpenException(downstream); // open, or half-open with its trials taken
        }
        exchange.getMessage().setHeader("Accept", "application/json");
        exchange.setProperty(STARTED, System.nanoTime());
    }

    /** The {@code code} of a downstream answer {@code {"code":…,"message":…}}, or null. */
    public String codeOf(String answer) {
        return businessCode(answer);
    }

    /**
     * A status the step accepted but the route does not want after all (e.g. a 409 other than
     * ALREADY_SUBMITTED): fails the flow exactly as if the step had not accepted it.
     */
    public void refuse(int status, String answer) throws HttpOperationFailedException {
        throw new HttpOperationFailedException(null, status, null, null, java.util.Map.of(), answer);
    }

    /** After an HTTP step answered with a status the step accepts. */
    public void after(Exchange exchange) {
        if (exchange.getException() != null || exchange.isFailed()) {
            return; // the call failed: classify() counts it against the circuit, never as an answer
        }
        String downstream = exchange.getProperty(DOWNSTREAM, String.class);
        Integer status = exchange.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE, Integer.class);
        circuits.recordSuccess(downstream);
        stopTimer(exchange, status == null ? "error" : (status / 100) + "xx");
        exchange.getMessage().getHeaders().keySet().removeIf(name -> !Exchange.HTTP_RESPONSE_CODE.equals(name));
    }

    /**
     * The outcome of a registration that ended in an exception. System errors count against the circuit
     * of the downstream that failed and charge the attempt (the call was made); only a call the circuit did
     * not let through defers the row uncharged.
     */
    public Outcome classify(Exception failure, Exchange exchange) {
        String downstream = exchange.getProperty(DOWNSTREAM, String.class);
        String call = callOf(exchange);
        if (failure instanceof CircuitOpenException open) {
            log.info("Deferred uncharged: {} circuit is open", open.downstream());
            return Outcome.deferred(open.downstream());
        }
        if (failure instanceof HttpOperationFailedException http) {
            stopTimer(exchange, (http.getStatusCode() / 100) + "xx");
            if (http.getStatusCode() < 500) {
                circuits.recordSuccess(downstream);
                String message = businessMessage(http.getResponseBody());
                if (message != null) {
                    Outcome refused = Outcome.businessFailure(businessCode(http.getResponseBody()),
                            PatientDataMask.mask(message, patientValues(exchange)));
                    log.info("Refused by {} at {}: HTTP {} {}", downstream, call, http.getStatusCode(), refused.failureCode());
                    return refused;
                }
            } else {
                circuits.recordFailure(downstream);
            }
            meters.counter("adapter.downstream.errors", "call", call, "kind", http.getStatusCode() >= 500 ? "5xx" : "4xx").increment();
            log.warn("System error from {} at {}: HTTP {}", downstream, call, http.getStatusCode());
            return Outcome.systemFailure(downstream); // the call was made: charged, even if it (re-)opened the circuit
        }
        if (exchange.getProperty(STARTED) != null) { // the call itself failed: timeout, refused, reset
            stopTimer(exchange, "error");
            circuits.recordFailure(downstream);
            meters.counter("adapter.downstream.errors", "call", call, "kind", "transport").increment();
            log.warn("System error from {} at {}: {}", downstream, call, LoggedFailure.describe(failure));
            return Outcome.systemFailure(downstream);
        }
        if (failure instanceof SystemException) { // an answer the flow could not use (no guestId, unreadable body)
            log.warn("System error from {} at {}: {}", downstream, call, LoggedFailure.describe(failure));
            return Outcome.systemFailure(downstream);
        }
        log.error("Registration failed at {}: {}", call, LoggedFailure.describe(failure));
        return Outcome.systemFailure(downstream);
    }

    /** The row's own patient values: from the message and from the legacy patient record, if it was read. */
    private java.util.List<String> patientValues(Exchange exchange) {
        java.util.List<String> values = new java.util.ArrayList<>();
        if (exchange.getProperty("msg") instanceof Registration msg) {
            values.add(msg.patno());
            values.add(msg.patNm());
            values.add(msg.mobileNo());
        }
        JsonNode patient = errorBody(exchange.getProperty("patient", String.class));
        if (patient != null) {
            values.add(patient.path("patno").asText(null));
            values.add(patient.path("patNm").asText(null));
            values.add(patient.path("mobileNo").asText(null));
        }
        return values;
    }

    /** Masks the row's patient values in a downstream's text (see {@link PatientDataMask}). */
    public String masked(String text, Exchange exchange) {
        return PatientDataMask.mask(text, patientValues(exchange));
    }


    private void stopTimer(Exchange exchange, String outcome) {
        Long started = exchange.removeProperty(STARTED) instanceof Long l ? l : null;
        if (started != null) {
            Timer.builder("adapter.downstream.calls").tag("call", callOf(exchange)).tag("outcome", outcome)
                    .register(meters).record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        }
    }

    /** The enclosing {@code step} id names the call; a bare HTTP step is named by its downstream. */
    private static String callOf(Exchange exchange) {
        String call = exchange.getProperty(CALL, String.class);
        return call == null ? "unknown" : call;
    }

    String downstreamOf(String uri) {
        if (uri != null) {
            if (matches(uri, properties.getLegacy().getBaseUrl())) {
                return "legacy";
            }
            if (matches(uri, properties.getAccount().getBaseUrl())) {
                return "account";
            }
            if (matches(uri, properties.getSurvey().getBaseUrl())) {
                return "survey";
            }
        }
        return "other";
    }

    private static boolean matches(String uri, String baseUrl) {
        if (baseUrl == null) {
            return false;
        }
        String bare = baseUrl.replaceFirst("^https?://", "");
        return uri.replaceFirst("^https?:/*", "").startsWith(bare);
    }

    private String businessMessage(String body) {
        JsonNode error = errorBody(body);
        if (error != null && error.hasNonNull("message") && !error.get("message").asText().isBlank()) {
            return error.get("message").asText();
        }
        return null;
    }

    private String businessCode(String body) {
        JsonNode error = errorBody(body);
        return error == null ? null : error.path("code").asText(null);
    }

    private JsonNode errorBody(String body) {
        try {
            JsonNode node = body == null ? null : mapper.readTree(body);
            return node != null && node.isObject() ? node : null;
        } catch (IOException e) {
            return null;
        }
    }

}
