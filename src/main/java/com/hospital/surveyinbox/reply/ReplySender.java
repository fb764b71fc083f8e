package com.hospital.surveyinbox.reply;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Steps of {@code routes/inbox-reply.camel.yaml} that compute: the claim's parameters with this sender's token
 * ({@link #claim}), the legacy request body ({@link #body}), the record statement's parameters ({@link #result}) and the log line
 * and counter ({@link #logged}). Which answer delivers the reply (a 2xx) is the route's. The obligation itself ({@code sql/claim-reply.sql}) is a map of the row:
 * id, srvyDrawupNo, reasonCode, reason, replyAttempt (which sender holds it).
 */
@Component("replySender")
public class ReplySender {

    private static final Logger log = LoggerFactory.getLogger(ReplySender.class);

    private final ObjectMapper mapper;
    private final MeterRegistry meters;

    public ReplySender(ObjectMapper mapper, MeterRegistry meters) {
        this.mapper = mapper;
        this.meters = meters;
    }

    /**
     * Named parameters of {@code sql/claim-reply.sql}: the row and a token naming this sender, the same on every try of
     * the claim (the step's database redelivery), so a claim whose COMMIT went through while its answer was lost is
     * taken again by its retry instead of refused as another sender's.
     */
    public Map<String, Object> claim(long id) {
        return Map.of("id", id, "token", UUID.randomUUID().toString());
    }

    /** {@code POST {legacy}/survey-send-results} body (CONTRACT §3). */
    public String body(Map<String, Object> owed) throws JsonProcessingException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("srvyDrawupNo", owed.get("srvyDrawupNo"));
        body.put("inboxId", String.valueOf(owed.get("id")));
        body.put("resultCode", "N");
        body.put("reasonCode", owed.get("reasonCode"));
        body.put("reason", owed.get("reason"));
        return mapper.writeValueAsString(body);
    }

    /**
     * Named parameters of {@code sql/mark-reply-sent.sql} / {@code mark-reply-failed.sql}. {@code waiting}: the
     * reply was not sent (the legacy circuit is open), so the try does not count towards its backoff.
     */
    public Map<String, Object> result(Map<String, Object> owed, String error, Boolean waiting) {
        Map<String, Object> params = new HashMap<>();
        params.put("id", owed.get("id"));
        params.put("replyAttempt", owed.get("replyAttempt"));
        params.put("error", error);
        params.put("failed", Boolean.TRUE.equals(waiting) ? 0 : 1);
        return params;
    }

    /**
     * Counts and logs one sender's result. {@code recorded}: the rows its record statement changed; 0 when the
     * sender no longer held the reply (an operator's requeue withdrew it, a newer sender took it over): then nothing
     * was written and the result is counted as stale, neither sent nor failed. (A withdrawn DEAD reply that got
     * through is written, SENT, and counted sent.) {@code waiting}: not sent, the legacy circuit being open — counted
     * as waiting, logged at DEBUG: as a failed send (a WARN each), a day's legacy outage showed every owed reply
     * failing every tick, against the failing-replies gauge, which leaves waits out.
     */
    public void logged(Map<String, Object> owed, String error, Integer recorded, Boolean waiting) {
        String reason = String.valueOf(owed.get("reasonCode"));
        boolean stale = recorded != null && recorded == 0;
        boolean waited = !stale && error != null && Boolean.TRUE.equals(waiting);
        meters.counter("adapter.replies", "reason", reason, "outcome",
                stale ? "stale" : error == null ? "sent" : waited ? "waiting" : "failed").increment();
        if (waited) {
            log.debug("Inbox {} reply {} waits ({})", owed.get("id"), reason, error);
        } else if (stale) {
            log.info("Inbox {} reply {} {} by a sender that no longer held it (requeued, or taken by a newer sender): not recorded",
                    owed.get("id"), reason, error == null ? "delivered" : "not delivered (" + error + ")");
        } else if (error == null) {
            log.info("Inbox {} reply {} delivered", owed.get("id"), reason);
        } else {
            log.warn("Inbox {} reply {} not delivered ({}); the redelivery job retries it", owed.get("id"), reason, error);
        }
    }
}
