package com.hospital.surveyinbox.processing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.FailureResult;
import com.hospital.surveyinbox.inbox.InboxEventPublisher;
import com.hospital.surveyinbox.inbox.InboxStatus;
import com.hospital.surveyinbox.inbox.InboxStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.springframework.stereotype.Component;

/**
 * The steps of {@code routes/inbox-process.camel.yaml}: {@link #claim} (step {@code inbox-process-claim}),
 * {@link #register} ({@code inbox-process-register}), {@link #record} ({@code inbox-process-record-outcome})
 * and {@link #releaseSuccessor} ({@code inbox-process-release-successor}). None of them lets an exception
 * out for a row's own failure: the outcome is written on the row, which is the only retry ledger.
 */
@Component("inboxProcessor")
public class InboxProcessor {

    private static final Logger log = LoggerFactory.getLogger(InboxProcessor.class);

    private final InboxStore store;
    private final RegistrationFlow flow;
    private final InboxEventPublisher publisher;
    private final AdapterProperties properties;
    private final ObjectMapper mapper;
    private final MeterRegistry meters;
    private final DownstreamCircuits circuits;

    public InboxProcessor(InboxStore store, RegistrationFlow flow, InboxEventPublisher publisher,
                          AdapterProperties properties, ObjectMapper mapper, MeterRegistry meters,
                          DownstreamCircuits circuits) {
        this.circuits = circuits;
        this.store = store;
        this.flow = flow;
        this.publisher = publisher;
        this.properties = properties;
        this.mapper = mapper;
        this.meters = meters;
    }

    /**
     * Claims the row named by the event (one conditional UPDATE). Returns null — and the route stops —
     * when the event is unreadable, the row is taken or finished, or an earlier row of its subject is
     * unfinished (then the hold is recorded on the row).
     */
    public ClaimedRow claim(String eventJson) {
        Long inboxId = inboxId(eventJson);
        if (inboxId == null) {
            meters.counter("adapter.inbox.claims", "result", "unreadable-event").increment();
            return null;
        }
        MDC.put("inboxId", inboxId.toString());
        ClaimedRow row = store.claim(inboxId).orElse(null);
        if (row == null) {
            store.recordHold(inboxId).ifPresentOrElse(
                    blocker -> {
                        meters.counter("adapter.inbox.claims", "result", "held").increment();
                        log.info("Inbox {} held: waiting behind inbox {} of the same subject", inboxId, blocker);
                    },
                    () -> {
                        meters.counter("adapter.inbox.claims", "result", "not-claimable").increment();
                        log.debug("Inbox {} not claimable (taken or finished); event ignored", inboxId);
                    });
            return null;
        }
        MDC.put("srvyDrawupNo", row.srvyDrawupNo());
        meters.counter("adapter.inbox.claims", "result", "claimed").increment();
        log.info("Inbox {} claimed, attempt {}", row.inboxId(), row.attempt());
        return row;
    }

    /** Runs the registration flow; every failure becomes an {@link Outcome}, never an exception. */
    public Attempt register(ClaimedRow row) {
        Outcome outcome;
        String open = circuits.firstOpen(DownstreamCircuits.needs(row.msgType()));
        if (open != null) {
            log.info("Inbox {} deferred uncharged: {} circuit is open", row.inboxId(), open);
            return new Attempt(row, Outcome.deferred(open), null, false);
        }
        try {
            outcome = flow.register(row);
        } catch (BusinessException e) {
            log.info("Inbox {} attempt {} refused downstream ({}): {}", row.inboxId(), row.attempt(), e.code(), e.getMessage());
            outcome = Outcome.businessFailure(e.getMessage());
        } catch (SystemException e) {
            log.warn("Inbox {} attempt {} system error at {}: {}", row.inboxId(), row.attempt(), e.downstream(), describe(e));
            // the error that opened (or re-opened) the circuit is an outage, not this row's fault
            outcome = circuits.isOpen(e.downstream()) ? Outcome.deferred(e.downstream()) : Outcome.systemFailure(e.downstream());
        } catch (RuntimeException e) {
            log.error("Inbox {} attempt {} failed unexpectedly: {}", row.inboxId(), row.attempt(), describe(e), e);
            outcome = Outcome.systemFailure(null);
        }
        return new Attempt(row, outcome, null, false);
    }

    /** Writes the attempt's outcome, fenced by the claim token; a stale worker's write changes nothing. */
    public Attempt record(Attempt attempt) {
        ClaimedRow row = attempt.row();
        Outcome outcome = attempt.outcome();
        if (outcome.deferred()) {
            boolean applied = store.defer(row, outcome.failureReason());
            meters.counter("adapter.inbox.outcomes", "outcome", applied ? "deferred" : "stale").increment();
            return new Attempt(row, outcome, applied ? InboxStatus.FAILED : null, false);
        }
        if (outcome.success()) {
            if (!store.complete(row, outcome.reply(), outcome.replyReason())) {
                meters.counter("adapter.inbox.outcomes", "outcome", "stale").increment();
                log.warn("Inbox {} attempt {}: completion rejected, the row was re-claimed meanwhile", row.inboxId(), row.attempt());
                return new Attempt(row, outcome, null, false);
            }
            meters.counter("adapter.inbox.outcomes", "outcome", "completed").increment();
            log.info("Inbox {} COMPLETED{}", row.inboxId(), outcome.reply() == null ? "" : " (reply " + outcome.reply() + " owed)");
            return new Attempt(row, outcome, InboxStatus.COMPLETED, outcome.reply() != null);
        }
        FailureResult result = store.fail(row, outcome.failureReason(), properties.getInbox().getMaxAttempts());
        if (!result.applied()) {
            meters.counter("adapter.inbox.outcomes", "outcome", "stale").increment();
            log.warn("Inbox {} attempt {}: failure record rejected, the row was re-claimed meanwhile", row.inboxId(), row.attempt());
            return new Attempt(row, outcome, null, false);
        }
        meters.counter("adapter.inbox.outcomes", "outcome", result.status().name().toLowerCase()).increment();
        log.info("Inbox {} {} after attempt {}: {}", row.inboxId(), result.status(), row.attempt(), outcome.failureReason());
        return new Attempt(row, outcome, result.status(), result.status() == InboxStatus.DEAD);
    }

    /** A finished row may have held back later rows of its subject: republish the next one now. */
    public void releaseSuccessor(Attempt attempt) {
        store.findHeldSuccessor(attempt.inboxId(), attempt.row().srvyDrawupNo()).ifPresent(next -> {
            log.info("Inbox {} finished; republishing held inbox {}", attempt.inboxId(), next.inboxId());
            publisher.publish(next);
        });
    }

    /** Last step of the route: the consumer thread carries no row context into the next record. */
    public void clearContext() {
        MDC.remove("inboxId");
        MDC.remove("srvyDrawupNo");
    }

    private Long inboxId(String eventJson) {
        try {
            JsonNode event = mapper.readTree(eventJson);
            String id = event == null ? null : event.path("inboxId").asText(null);
            return id == null ? null : Long.parseLong(id);
        } catch (IOException | NumberFormatException e) {
            log.warn("Unreadable inbox event skipped ({} chars)", eventJson == null ? 0 : eventJson.length());
            return null;
        }
    }

    /** Exception class chain without messages: downstream messages and URLs may carry patient numbers. */
    static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null && sb.length() < 300; t = t.getCause() == t ? null : t.getCause()) {
            if (!sb.isEmpty()) {
                sb.append(" <- ");
            }
            sb.append(t.getClass().getSimpleName());
        }
        return sb.toString();
    }
}
