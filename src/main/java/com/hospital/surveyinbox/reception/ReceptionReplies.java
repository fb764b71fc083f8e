package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.config.LatencyBuckets;
import com.hospital.surveyinbox.config.LoggedFailure;
import com.hospital.surveyinbox.processing.Outcome;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.camel.Exchange;
import org.springframework.stereotype.Component;

/**
 * Writes every answer of the reception endpoint (CONTRACT §1): status code, {@code X-Result-Code} and the
 * JSON body, and times it ({@code adapter.reception.accept}). Which answer a case gets is decided in
 * {@code routes/inbox-receive.camel.yaml} (the {@code onException} clauses of {@code inbox-receive-errors},
 * the choice {@code inbox-receive-answer}); this bean only writes it. It first drops every message header,
 * so no request header (Authorization, Idempotency-Key, cookies) is ever echoed back.
 */
@Component("receptionReplies")
public class ReceptionReplies {

    private final ObjectMapper objectMapper;
    private final MeterRegistry meters;
    private final Map<String, Timer> acceptTimers = new java.util.concurrent.ConcurrentHashMap<>();

    public ReceptionReplies(ObjectMapper objectMapper, MeterRegistry meters) {
        this.objectMapper = objectMapper;
        this.meters = meters;
        // at zero from the start, as the DEAD count: the 503 alert and the SLO burn alerts read increases, and a pod's
        // first answers of a kind would otherwise appear as a series starting at their count (no increase seen): a
        // quiet hour of 500s spread over new pods stayed under the burn alerts' 7 bad receptions, its first 200s did
        // not count as good
        timer(503, "N");
        timer(500, "N");
        timer(200, "Y");
    }

    private Timer timer(int status, String resultCode) {
        return acceptTimers.computeIfAbsent(status + resultCode, k -> Timer.builder("adapter.reception.accept")
                .description("reception time, request to answer")
                .tag("status", Integer.toString(status)).tag("resultCode", resultCode)
                .serviceLevelObjectives(LatencyBuckets.RECEPTION).register(meters));
    }

    /** Counts an answer a filter gives at once, before the route (timed as answered at once), as the route's are. */
    public void answeredAtOnce(int status, String resultCode) {
        timer(status, resultCode).record(0, TimeUnit.NANOSECONDS);
    }

    /**
     * The answer: sets the status and headers on {@code headers} (the message's, {@code ${headers}}) and
     * returns the JSON body.
     *
     * @param inboxId       the stored row's id (200 Y of a stored message), or null
     * @param elapsedMillis time since the request arrived ({@code ${exchange.clock.elapsed}}), for the timer
     */
    public String write(int status, String resultCode, String message, Long inboxId, long elapsedMillis,
                        Map<String, Object> headers) throws JsonProcessingException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("resultCode", resultCode);
        body.put("resultMessage", message);
        if (inboxId != null) {
            body.put("inboxId", Long.toString(inboxId));
        }
        timer(status, resultCode).record(elapsedMillis, TimeUnit.MILLISECONDS);
        headers.clear();
        headers.put(Exchange.HTTP_RESPONSE_CODE, status);
        headers.put(Exchange.CONTENT_TYPE, "application/json;charset=UTF-8");
        headers.put("X-Result-Code", resultCode);
        // a small body with Content-Length goes out in one write; chunked needs a second for its terminator
        headers.put(Exchange.HTTP_CHUNKED, false);
        return objectMapper.writeValueAsString(body);
    }

    /**
     * The answer with an outcome's own text: its failure reason, or the reason of the reply it owes. The
     * text is read from the {@link Outcome}, never passed through the route as a parameter string (Camel's
     * parameter binding strips surrounding quotes and reads "null" as null).
     */
    public String writeReason(int status, String resultCode, Outcome outcome, Long inboxId, long elapsedMillis,
                              Map<String, Object> headers) throws JsonProcessingException {
        return write(status, resultCode, outcome.success() ? outcome.replyReason() : outcome.failureReason(), inboxId,
                elapsedMillis, headers);
    }

    /** The answer to a refused message: the status and text the validator gave it (400 N). */
    public String writeRejected(ReceptionRejectedException rejected, long elapsedMillis, Map<String, Object> headers)
            throws JsonProcessingException {
        return write(rejected.status(), "N", rejected.getMessage(), null, elapsedMillis, headers);
    }

    /** A failure as a log line may carry it (see {@link LoggedFailure}): never a value of the row. */
    public String describe(Throwable failure) {
        return LoggedFailure.describe(failure);
    }
}
