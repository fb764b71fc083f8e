package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.processing.Outcome;
import java.util.HashMap;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * The old synchronous path, behind the rollback toggle ({@code routes/inbox-receive.camel.yaml}, branch
 * {@code inbox-receive-when-synchronous}): the message runs through the same {@code inbox-register}
 * route as the consumer's rows, as a row that is not stored; the route answers with its outcome, and what it
 * registered goes on record ({@code sql/record-synchronous-registration.sql}).
 */
@Component("synchronousRegistration")
public class SynchronousRegistration {

    private final java.util.concurrent.Semaphore slots;
    private final long leaseExpiresAfterMillis;
    private final long retryDelayMillis;
    private final io.micrometer.core.instrument.Counter unrecorded;

    public SynchronousRegistration(com.hospital.surveyinbox.config.AdapterProperties properties,
                                   org.springframework.core.env.Environment environment, javax.sql.DataSource pool,
                                   io.micrometer.core.instrument.MeterRegistry meters) {
        this.slots = new java.util.concurrent.Semaphore(properties.getInbox().getSynchronousConcurrency());
        this.leaseExpiresAfterMillis = 2 * longestRegistrationMillis(properties, environment, pool);
        this.retryDelayMillis = properties.getInbox().getRetryDelay().toMillis();
        // at zero from the start: a pod's first unrecorded registration is an increase the alert
        // (SurveyInboxSynchronousRegistrationsUnrecorded) sees; a series first appearing at 1 shows none
        this.unrecorded = io.micrometer.core.instrument.Counter.builder("adapter.reception.synchronous.unrecorded")
                .description("registrations made on the synchronous path whose record the database did not take")
                .register(meters);
    }

    /**
     * Steps inbox-receive-count-unrecorded(-database): a registration made downstream but not on record (its subject's
     * next SEND would go out as a first SEND).
     */
    public void countUnrecorded() {
        unrecorded.increment();
    }

    /**
     * The longest a synchronous registration can last, every wait run out (the terms ProductionSafetyCheck counts):
     * its calls to their deadline, the consent turn, its statements to the pool's wait and socket timeout as the pool
     * uses them (a JDBC URL's {@code ?socketTimeout=} wins over the property: read from the setting, a URL's 30 s left
     * the lease expiring mid-registration, and a second pod registered the subject beside the first). A lease
     * twice as old is a dead pod's: taken over then, a subject waits minutes after a crash, not stuck-processing-after.
     */
    static long longestRegistrationMillis(com.hospital.surveyinbox.config.AdapterProperties properties,
                                          org.springframework.core.env.Environment environment, javax.sql.DataSource pool) {
        return com.hospital.surveyinbox.config.ProductionSafetyCheck.synchronousRegistrationMillis(properties.getHttp(),
                com.hospital.surveyinbox.config.ProductionSafetyCheck.statementMillis(environment, pool));
    }

    /**
     * Named parameters of {@code sql/claim-synchronous-registration.sql} and {@code release-synchronous-lease.sql}:
     * the subject, its Idempotency-Key, this registration's own holder id, this pod's bound
     * ({@link #longestRegistrationMillis}, twice): the expiry it writes on a lease it takes, and the age past which it
     * takes a lease (never before the holder's own expiry), and the receptions' subject-lock key space (the record's id
     * is reserved under the subject's lock).
     */
    public Map<String, Object> lease(ReceivedMessage message) {
        Map<String, Object> params = new HashMap<>();
        params.put("srvyDrawupNo", message.srvyDrawupNo());
        params.put("idempotencyKey", message.idempotencyKey());
        params.put("holder", java.util.UUID.randomUUID().toString());
        params.put("expireAfterMillis", leaseExpiresAfterMillis);
        params.put("lockSpace", InboxStore.SUBJECT_LOCK_SPACE);
        return params;
    }

    /**
     * Named parameters of {@code sql/find-successor.sql} once the subject's lease is given back: its oldest row that
     * may claim now (no own row to leave out: -1), a FAILED one once due after {@code retry-delay}.
     */
    public Map<String, Object> heldBack(String srvyDrawupNo) {
        Map<String, Object> params = new HashMap<>();
        params.put("srvyDrawupNo", srvyDrawupNo);
        params.put("id", -1L);
        params.put("retryDelayMillis", retryDelayMillis);
        return params;
    }

    /**
     * Named parameters of {@code sql/find-key-on-record.sql}: the subject and its Idempotency-Key (the lease's), and
     * the record's id the claim reserved with the lease.
     */
    public Map<String, Object> recheck(Map<String, Object> lease, long recordId) {
        Map<String, Object> params = new HashMap<>();
        params.put("srvyDrawupNo", lease.get("srvyDrawupNo"));
        params.put("idempotencyKey", lease.get("idempotencyKey"));
        params.put("recordId", recordId);
        return params;
    }

    /**
     * Takes one of {@code adapter.inbox.synchronous-concurrency} slots, without waiting; false when all are taken.
     * Unbounded, a burst held every request thread for a registration's length, and beyond 50 at once the
     * registrations waited for a pooled downstream connection, timed out and opened the downstream's circuit: a
     * local shortage taken for an outage, the stored rows deferred with it. The route gives the slot back
     * ({@link #leave()}) however the registration ends.
     */
    public boolean enter() {
        return slots.tryAcquire();
    }

    /** Gives back the slot {@link #enter()} took. */
    public void leave() {
        slots.release();
    }

    /** Slots free now (a test's and an operator's view: all of them whenever no registration runs). */
    public int available() {
        return slots.availablePermits();
    }

    /**
     * The received message as the row the registration route reads, not stored ({@link ClaimedRow#NOT_STORED}), its
     * claim the subject's lease ({@code holder}: inbox-register renews it before a submission or a resend, and sends
     * nothing once another registration took it over); the subject goes into this request's log
     * context (as the worker's claim puts it there; RequestThreadMdc clears it when the request ends). A synchronous
     * registration leaves no row when it fails: its log lines ("Refused by survey…", "System error from…") are all an
     * operator has of it, and they named no subject.
     */
    public ClaimedRow row(ReceivedMessage message, String holder) {
        org.slf4j.MDC.put("srvyDrawupNo", message.srvyDrawupNo());
        return new ClaimedRow(ClaimedRow.NOT_STORED, message.srvyDrawupNo(), message.msgType(), message.payload(), 1,
                java.util.UUID.fromString(java.util.Objects.requireNonNull(holder, "the subject's lease holder")));
    }

    /**
     * Named parameters of {@code sql/record-synchronous-registration.sql}: the registration's holder id (its lease's:
     * the record's fence, kept as its claim_token) and the record's id reserved with it, the subject, the type, the
     * sender's key, the subject locks' key space, and the reply the answer carried (NOTIFY_SKIPPED, ALREADY_SUBMITTED;
     * null for none) with its reason.
     */
    public Map<String, Object> record(ReceivedMessage message, Outcome outcome, String holder, long recordId) {
        Map<String, Object> params = new HashMap<>();
        params.put("holder", java.util.Objects.requireNonNull(holder, "the registration's holder id"));
        params.put("recordId", recordId);
        params.put("srvyDrawupNo", message.srvyDrawupNo());
        params.put("msgType", message.msgType());
        params.put("idempotencyKey", message.idempotencyKey());
        params.put("lockSpace", InboxStore.SUBJECT_LOCK_SPACE); // the receptions' subject locks, not a copy of the number
        params.put("replyCode", outcome.reply() == null ? null : outcome.reply().name());
        params.put("replyReason", outcome.replyReason());
        return params;
    }
}
