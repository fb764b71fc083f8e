package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.springframework.stereotype.Component;

/**
 * Steps of {@code routes/inbox-process.camel.yaml} around the outcome write: the named parameters of
 * {@code sql/complete-row.sql}, {@code fail-row.sql}, {@code defer-row.sql}, {@code find-own-outcome.sql} and
 * {@code find-successor.sql}
 * ({@link #params}), and what gets logged and counted once the row said what it recorded, or once a claim
 * was refused ({@link #held}, {@link #notClaimable}).
 */
@Component("processingRecord")
public class ProcessingRecord {

    private static final Logger log = LoggerFactory.getLogger(ProcessingRecord.class);

    private final AdapterProperties properties;
    private final MeterRegistry meters;

    /** Counter of recorded outcomes, tagged {@code outcome} (the DEAD alert reads {@code outcome="dead"}). */
    public static final String OUTCOMES = "adapter.inbox.outcomes";

    public ProcessingRecord(AdapterProperties properties, MeterRegistry meters) {
        this.properties = properties;
        this.meters = meters;
        // at zero from the start: a pod's first row going DEAD (or stale outcome) is an increase the alert sees (a
        // series that first appears at 1 shows none; stale outcomes are rare one-offs, so that was nearly all of them)
        meters.counter(OUTCOMES, "outcome", "dead");
        meters.counter(OUTCOMES, "outcome", "stale");
    }

    /** Step {@code inbox-process-params}: every named parameter the outcome statements use. */
    public Map<String, Object> params(ClaimedRow row, Outcome outcome) {
        Map<String, Object> params = new HashMap<>();
        params.put("id", row.inboxId());
        params.put("srvyDrawupNo", row.srvyDrawupNo());
        params.put("token", row.claimToken().toString());
        params.put("attempt", row.attempt());
        params.put("maxAttempts", properties.getInbox().getMaxAttempts());
        params.put("retryDelayMillis", properties.getInbox().getRetryDelay().toMillis());
        params.put("reason", outcome.failureReason());
        params.put("code", outcome.failureCode());
        params.put("detail", outcome.failureDetail());
        params.put("replyCode", outcome.reply() == null ? null : outcome.reply().name());
        params.put("replyReason", outcome.replyReason());
        return params;
    }

    /** Named parameters of the statements about one row by id ({@code sql/record-hold.sql}). */
    public Map<String, Object> key(long inboxId) {
        return Map.of("id", inboxId);
    }

    /** The fenced write applied, or read back as this claim's (find-own-outcome.sql): log and count the status it recorded. */
    public void recorded(ClaimedRow row, Outcome outcome, String status) {
        String counted = outcome.deferred() ? "deferred" : status.toLowerCase();
        meters.counter(OUTCOMES, "outcome", counted).increment();
        if (outcome.success()) {
            log.info("Inbox {} COMPLETED{}", row.inboxId(), outcome.reply() == null ? "" : " (reply " + outcome.reply() + " owed)");
        } else if (!outcome.systemError() && outcome.failureCode() != null) {
            // a business error: its text may quote the patient, so the log names the downstream's code only
            log.info("Inbox {} {} after attempt {}: business error {}", row.inboxId(), status, row.attempt(),
                    outcome.failureCode());
        } else {
            log.info("Inbox {} {} after attempt {}: {}", row.inboxId(), outcome.deferred() ? "deferred" : status,
                    row.attempt(), outcome.failureReason());
        }
    }

    /** The fenced write changed nothing and no outcome of this claim was read back: a newer attempt owns the row (stuck-row reset, requeue). */
    public void stale(ClaimedRow row) {
        meters.counter(OUTCOMES, "outcome", "stale").increment();
        log.warn("Inbox {} attempt {}: outcome not recorded, the row was re-claimed meanwhile", row.inboxId(), row.attempt());
    }

    /**
     * The claim was refused because an earlier row of the subject is unfinished, or another row of it is being
     * registered ({@code sql/record-hold.sql} named it).
     */
    public void held(long inboxId, long blocker) {
        meters.counter("adapter.inbox.claims", "result", "held").increment();
        log.info("Inbox {} held: waiting behind inbox {} of the same subject", inboxId, blocker);
    }

    /** The claim was refused and nothing holds the row: it is taken by another worker, or finished. */
    public void notClaimable(long inboxId) {
        meters.counter("adapter.inbox.claims", "result", "not-claimable").increment();
        log.debug("Inbox {} not claimable (taken or finished); event ignored", inboxId);
    }

    /** An event whose inbox id cannot be read: nothing to claim; the offset is committed. */
    public void unreadable() {
        meters.counter("adapter.inbox.claims", "result", "unreadable-event").increment();
        log.warn("Unreadable inbox event skipped");
    }

    /** Last step of every path: the consumer thread carries no row context into the next record. */
    public void clearContext() {
        MDC.remove("inboxId");
        MDC.remove("srvyDrawupNo");
    }
}
