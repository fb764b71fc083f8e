package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.config.LoggedFailure;
import com.hospital.surveyinbox.inbox.DatabaseFailures;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.inbox.Acceptance;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.stereotype.Component;
import org.springframework.transaction.TransactionException;

/**
 * Shapes every answer of the reception endpoint (CONTRACT §1): status code, {@code X-Result-Code} and the
 * JSON body. It first drops every message header, so no request header (Authorization, Idempotency-Key,
 * cookies) is ever echoed back.
 *
 * <p>Called by {@code routes/inbox-receive.camel.yaml}, steps {@code inbox-receive-reply-accepted},
 * {@code inbox-receive-reply-rejected} and the synchronous-path replies.
 */
@Component("receptionReplies")
public class ReceptionReplies {

    private static final Logger log = LoggerFactory.getLogger(ReceptionReplies.class);

    private final ObjectMapper objectMapper;
    private final MeterRegistry meters;
    private final Map<String, Timer> acceptTimers = new java.util.concurrent.ConcurrentHashMap<>();

    public ReceptionReplies(ObjectMapper objectMapper, MeterRegistry meters) {
        this.objectMapper = objectMapper;
        this.meters = meters;
    }

    /** 200 Y: stored in the inbox (reception complete, not registration complete). */
    public void accepted(Exchange exchange) {
        Acceptance acceptance = exchange.getMessage().getBody(Acceptance.class);
        String message = acceptance.fresh() ? "received" : "received (duplicate Idempotency-Key, first inboxId returned)";
        write(exchange, 200, "Y", message, Long.toString(acceptance.inboxId()));
    }

    /** The answer for any exception caught by the route: a rejection, the database being down, or a bug. */
    public void rejected(Exchange exchange) {
        Throwable cause = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Throwable.class);
        if (cause instanceof ReceptionRejectedException rejected) {
            write(exchange, rejected.status(), "N", rejected.getMessage(), null);
        } else if (DatabaseFailures.unavailable(cause)) {
            log.warn("Inbox unavailable; answering 503 so the sender retries: {}", LoggedFailure.describe(cause));
            write(exchange, 503, "N", "inbox temporarily unavailable; nothing stored, please retry", null);
        } else if (cause instanceof DataAccessException || cause instanceof TransactionException) {
            // the database refused this row: a retry would be refused again, so no 503 "please retry"
            log.error("Inbox refused the row; nothing stored: {}", LoggedFailure.describe(cause));
            write(exchange, 500, "N", "message could not be stored", null);
        } else {
            log.error("Unexpected reception failure; nothing acknowledged: {}", LoggedFailure.describe(cause));
            write(exchange, 500, "N", "internal error; nothing stored, please retry", null);
        }
    }

    /** Outcome of the synchronous path (rollback toggle): 200 Y on success, 200 N with the business reason. */
    public void synchronousOutcome(Exchange exchange, boolean success, String reason) {
        write(exchange, 200, success ? "Y" : "N", success ? "registered" : reason, null);
    }

    void write(Exchange exchange, int status, String resultCode, String message, String inboxId) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("resultCode", resultCode);
        body.put("resultMessage", message);
        if (inboxId != null) {
            body.put("inboxId", inboxId);
        }
        acceptTimers.computeIfAbsent(status + resultCode, k -> Timer.builder("adapter.reception.accept")
                        .description("reception time, request to answer")
                        .tag("status", Integer.toString(status)).tag("resultCode", resultCode)
                        .publishPercentiles(0.5, 0.99).register(meters))
                .record(exchange.getClock().elapsed(), TimeUnit.MILLISECONDS);
        Message out = exchange.getMessage();
        out.getHeaders().clear();
        out.setHeader(Exchange.HTTP_RESPONSE_CODE, status);
        out.setHeader(Exchange.CONTENT_TYPE, "application/json;charset=UTF-8");
        out.setHeader("X-Result-Code", resultCode);
        // a small body with Content-Length goes out in one write; chunked needs a second for its terminator
        out.setHeader(Exchange.HTTP_CHUNKED, false);
        try {
            out.setBody(objectMapper.writeValueAsString(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

}
