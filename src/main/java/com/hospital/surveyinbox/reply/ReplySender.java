package com.hospital.surveyinbox.reply;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.OwedReply;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.camel.Exchange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Steps of {@code routes/inbox-reply.camel.yaml}: take the row's reply obligation ({@code inbox-reply-claim}),
 * build the legacy request ({@code inbox-reply-prepare}), record what the legacy system answered
 * ({@code inbox-reply-record}, {@code inbox-reply-record-failure}). Only a 2xx marks the reply SENT;
 * a SENT reply is never taken again, so each reason is delivered successfully at most once.
 */
@Component("replySender")
public class ReplySender {

    public static final String OWED = "owedReply";
    private static final Logger log = LoggerFactory.getLogger(ReplySender.class);

    private final InboxStore store;
    private final ObjectMapper mapper;
    private final MeterRegistry meters;

    public ReplySender(InboxStore store, ObjectMapper mapper, MeterRegistry meters) {
        this.store = store;
        this.mapper = mapper;
        this.meters = meters;
    }

    /** Body: the inbox id. Returns the obligation now held by this sender, or null if none is owed. */
    public OwedReply claim(Exchange exchange) {
        Long inboxId = exchange.getMessage().getBody(Long.class);
        OwedReply owed = inboxId == null ? null : store.claimReply(inboxId).orElse(null);
        exchange.setProperty(OWED, owed);
        return owed;
    }

    public void prepare(Exchange exchange) throws JsonProcessingException {
        OwedReply owed = exchange.getProperty(OWED, OwedReply.class);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("srvyDrawupNo", owed.srvyDrawupNo());
        body.put("inboxId", Long.toString(owed.inboxId()));
        body.put("resultCode", "N");
        body.put("reasonCode", owed.reasonCode().name());
        body.put("reason", owed.reason());
        exchange.getMessage().getHeaders().clear();
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, "application/json");
        exchange.getMessage().setHeader("Accept", "application/json");
        exchange.getMessage().setBody(mapper.writeValueAsString(body));
    }

    public void record(Exchange exchange) {
        OwedReply owed = exchange.getProperty(OWED, OwedReply.class);
        Integer status = exchange.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE, Integer.class);
        if (status != null && status >= 200 && status < 300) {
            store.markReplySent(owed.inboxId());
            meters.counter("adapter.replies", "reason", owed.reasonCode().name(), "outcome", "sent").increment();
            log.info("Inbox {} reply {} delivered", owed.inboxId(), owed.reasonCode());
        } else {
            fail(owed, "legacy answered HTTP " + status);
        }
    }

    public void recordFailure(Exchange exchange) {
        OwedReply owed = exchange.getProperty(OWED, OwedReply.class);
        Throwable cause = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Throwable.class);
        fail(owed, cause == null ? "unknown error" : cause.getClass().getSimpleName());
    }

    private void fail(OwedReply owed, String error) {
        if (owed == null) {
            return;
        }
        store.markReplyFailed(owed.inboxId(), error);
        meters.counter("adapter.replies", "reason", owed.reasonCode().name(), "outcome", "failed").increment();
        log.warn("Inbox {} reply {} not delivered ({}); the redelivery job retries it", owed.inboxId(), owed.reasonCode(), error);
    }
}
