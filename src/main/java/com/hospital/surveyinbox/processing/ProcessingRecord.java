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
    private final com.fasterxml.jackson.databind.ObjectMapper objectMapper;

    /** Counter of recorded outcomes, tagged {@code outcome} (the DEAD alert reads {@code outcome="dead"}). */
    public static final String OUTCOMES = "adapter.inbox.outcomes";

    /** Counter of refused and taken claims, tagged {@code result}. */
    public static final String CLAIMS = "adapter.inbox.claims";

    public ProcessingRecord(AdapterProperties properties, MeterRegistry meters,
                            com.fasterxml.jackson.databind.ObjectMapper objectMapper) {
        this.properties = properties;
        this.meters = meters;
        this.objectMapper = objectMapper;
        // at zero from the start, as the outcomes below: the first lost row is an increase the alert sees
        meters.counter(CLAIMS, "result", "row-missing");
        meters.counter(CLAIMS, "result", "row-past-retention");
        meters.counter(CLAIMS, "result", "foreign-database");
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
        meters.counter(CLAIMS, "result", "held").increment();
        log.info("Inbox {} held: waiting behind inbox {} of the same subject", inboxId, blocker);
    }

    /** The claim was refused and nothing holds the row: it is taken by another worker, or finished. */
    public void notClaimable(long inboxId) {
        meters.counter(CLAIMS, "result", "not-claimable").increment();
        log.debug("Inbox {} not claimable (taken or finished); event ignored", inboxId);
    }

    /**
     * Named parameters of {@code sql/find-event-row.sql}: the event's id, subject and type (null when the event
     * carries none: checked by its id alone).
     */
    public Map<String, Object> eventKey(long inboxId, String event) {
        com.fasterxml.jackson.databind.JsonNode fields = fieldsOf(event);
        Map<String, Object> key = new HashMap<>();
        key.put("id", inboxId);
        key.put("srvyDrawupNo", fields.path("srvyDrawupNo").isTextual() ? fields.path("srvyDrawupNo").asText() : null);
        key.put("msgType", fields.path("msgType").isTextual() ? fields.path("msgType").asText() : null);
        return key;
    }

    private com.fasterxml.jackson.databind.JsonNode fieldsOf(String event) {
        try {
            return event == null ? com.fasterxml.jackson.databind.node.MissingNode.getInstance() : objectMapper.readTree(event);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
        }
    }

    /**
     * The claim was refused and the row the event names is not there, or its id holds another message: an
     * acknowledged message the database lost ({@code sql/find-event-row.sql}). Named with the event's id, subject and
     * type ({@link #eventKey}, already read from the event), the one record of it left (the sender will not send it
     * again); counted for the alert SurveyInboxAcknowledgedRowsLost.
     */
    public void eventWithoutRow(Map<String, Object> eventKey) {
        meters.counter(CLAIMS, "result", "row-missing").increment();
        // the one record of the message left: never dropped as a repeat (RepeatedLogLines), however many there are
        log.warn(org.slf4j.MarkerFactory.getMarker(com.hospital.surveyinbox.config.RepeatedLogLines.ALWAYS),
                "Inbox {} ({} {}) named by an event has no row (none by that id, or one holding another message): "
                        + "acknowledged, then lost by the database (restored to an earlier point, or a failover to a replica "
                        + "that was behind; published within adapter.retention.keep-finished, so not by retention); ask the legacy "
                        + "system to send it again",
                eventKey.get("id"), printable(eventKey.get("msgType")), printable(eventKey.get("srvyDrawupNo")));
    }

    /**
     * Whether the event was published longer ago than {@code adapter.retention.keep-finished} (its Kafka timestamp,
     * on the producing pod's clock: days against seconds of skew): retention may then have deleted its row, which
     * leaves only finished that long ago, and every event of a row is published before it finishes. Such events come
     * back when the topic is kept longer than that, or the group replays it from the start (offsets reset or expired).
     * An event without a timestamp is taken as recent.
     */
    public boolean publishedBeforeRetention(@org.apache.camel.Header(org.apache.camel.component.kafka.KafkaConstants.TIMESTAMP)
                                            Long publishedAt) {
        return publishedAt != null && publishedAt > 0
                && publishedAt < System.currentTimeMillis() - properties.getRetention().getKeepFinished().toMillis();
    }

    /**
     * An event without its row, published before retention's keep-finished ({@link #publishedBeforeRetention}):
     * its row was most likely deleted by retention; counted apart from the lost rows (no alert), logged at DEBUG
     * (a replay of an old topic brings one per finished row).
     */
    public void eventPastRetention(Map<String, Object> eventKey) {
        meters.counter(CLAIMS, "result", "row-past-retention").increment();
        log.debug("Inbox {} ({} {}) named by an event has no row; the event is older than adapter.retention.keep-finished "
                + "(its row deleted by retention)", eventKey.get("id"), printable(eventKey.get("msgType")),
                printable(eventKey.get("srvyDrawupNo")));
    }

    /** A field of an event as a log line may carry it: 64 characters at most, control characters as {@code ?}. */
    private static String printable(Object value) {
        String field = value == null ? "?" : value.toString();
        String cut = field.length() > 64 ? field.substring(0, 64) + "..." : field;
        return cut.codePoints().map(c -> Character.isISOControl(c) ? '?' : c)
                .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append).toString();
    }

    /** An event whose inbox id cannot be read: nothing to claim; the offset is committed. */
    public void unreadable() {
        meters.counter(CLAIMS, "result", "unreadable-event").increment();
        log.warn("Unreadable inbox event skipped");
    }

    /**
     * An event published against another database (its {@code inboxDatabase} header): another deployment shares this
     * one's topic and consumer group, and each takes events of the other's rows, which then wait for the redelivery
     * job (republished to the same partition, very likely to the same consumer). Or this database was created anew,
     * or restored from a backup older than its identity (V25), and the event is of a row it lost: so the line names
     * the event's id, type and subject, as a lost row's does, and one published before this database's identity
     * ({@code beforeIdentity}) is never dropped as a repeat; another deployment's go on arriving, and their repeats
     * are limited (RepeatedLogLines). Skipped, counted for the alert SurveyInboxForeignEvents.
     */
    public void foreignEvent(Map<String, Object> eventKey, boolean beforeIdentity) {
        meters.counter(CLAIMS, "result", "foreign-database").increment();
        log.warn(beforeIdentity ? org.slf4j.MarkerFactory.getMarker(com.hospital.surveyinbox.config.RepeatedLogLines.ALWAYS) : null,
                "Inbox {} ({} {}) named by an event published against another database skipped: another deployment shares "
                        + "topic {} and group {} (each takes the other's events, whose rows then wait; give each its own "
                        + "adapter.kafka.topic and adapter.kafka.group-id), or this database was created anew or restored from "
                        + "a backup older than its identity (then this is a message it lost: docs/operations.md, After a "
                        + "database restore)", eventKey.get("id"), printable(eventKey.get("msgType")),
                printable(eventKey.get("srvyDrawupNo")), properties.getKafka().getTopic(), properties.getKafka().getGroupId());
    }

    /** Last step of every path: the consumer thread carries no row context into the next record. */
    public void clearContext() {
        MDC.remove("inboxId");
        MDC.remove("srvyDrawupNo");
    }
}
