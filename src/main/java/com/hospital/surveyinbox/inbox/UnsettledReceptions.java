package com.hospital.surveyinbox.inbox;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import com.hospital.surveyinbox.config.LoggedFailure;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * Receptions answered 503 whose row may be stored all the same: their write reached the database and its answer
 * was lost (a COMMIT waiting for a synchronous standby past the socket timeout, a connection cut while the row was
 * written). The sender retries, as a 503 asks; if the first write committed after all, the retry is a second row
 * unless it carries the first one's {@code Idempotency-Key} (a second {@code SEND} of a subject reads as a resend
 * request: the patient is sent the survey twice). Nothing is lost either way, but an operator has to know which
 * rows to look at, so each such reception is counted ({@code adapter_reception_unsettled_total}) and named at WARN:
 * <ul>
 *   <li>a group's COMMIT that {@link InboxStore#committedAfterAll} could not settle: its new rows' inbox ids, then,
 *       followed up every {@link #FOLLOW_UP_EVERY} on another connection for up to {@link #FOLLOW_UP_FOR}, the
 *       transaction's fate: "stored after all" (counted in {@code adapter_reception_unsettled_stored_total}) or
 *       "not stored";</li>
 *   <li>a lone row's autocommit insert whose answer was lost ({@link DatabaseFailures#answerLost}): its id was never
 *       read, so the WARN names its subject and type (the console's list filtered by {@code srvyDrawupNo} finds it).</li>
 * </ul>
 */
final class UnsettledReceptions implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(UnsettledReceptions.class);

    static final Duration FOLLOW_UP_EVERY = Duration.ofSeconds(5);
    static final Duration FOLLOW_UP_FOR = Duration.ofHours(1);

    private final JdbcOperations other;
    private final Counter unsettled;
    private final Counter storedAfterAll;
    private final Duration every;
    private final Duration lasting;
    private final ScheduledExecutorService followUps = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "unsettled-receptions");
        t.setDaemon(true);
        return t;
    });

    UnsettledReceptions(JdbcOperations other, MeterRegistry meters) {
        this(other, meters, FOLLOW_UP_EVERY, FOLLOW_UP_FOR);
    }

    UnsettledReceptions(JdbcOperations other, MeterRegistry meters, Duration every, Duration lasting) {
        this.other = other;
        this.every = every;
        this.lasting = lasting;
        this.unsettled = Counter.builder("adapter.reception.unsettled")
                .description("receptions answered 503 whose write reached the database and got no answer: their row may be"
                        + " stored (WARN \"may be stored although\" names them); a retry without its Idempotency-Key is a"
                        + " second row").register(meters);
        this.storedAfterAll = Counter.builder("adapter.reception.unsettled.stored")
                .description("of adapter.reception.unsettled, the rows of a group whose COMMIT was later found committed"
                        + " (WARN \"stored after all\" names them)").register(meters);
    }

    /** A group's COMMIT got no answer and was not found committed: its senders are answered 503. */
    void group(InboxStore.GroupBackend backend, List<Acceptance> rows) {
        List<Long> ids = rows.stream().filter(a -> a != null && a.fresh()).map(Acceptance::inboxId).toList();
        if (ids.isEmpty()) {
            return; // replays of stored rows only: nothing new could have been written
        }
        unsettled.increment(ids.size());
        log.warn("A group's COMMIT got no answer and could not be settled: inbox rows {} may be stored although their"
                        + " senders are answered 503 (a retry without its Idempotency-Key is a second row; a SEND's, a resend"
                        + " request); followed up every {} s for {} min on another connection",
                ids, every.toSeconds(), lasting.toMinutes());
        long deadline = System.nanoTime() + lasting.toNanos();
        try {
            followUps.schedule(() -> followUp(backend, ids, deadline), every.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            log.warn("Inbox rows {} not followed up: the service is stopping; look them up in the console", ids);
        }
    }

    /** A lone row's insert whose answer was lost: its sender is answered 503. */
    void lone(ReceivedMessage message, Throwable failure) {
        unsettled.increment();
        log.warn("A reception's insert got no answer ({}): a row of {} {} may be stored although its sender is answered 503"
                        + " (a retry without its Idempotency-Key is a second row; a SEND's, a resend request)",
                LoggedFailure.describe(failure), message.srvyDrawupNo(), message.msgType());
    }

    private void followUp(InboxStore.GroupBackend backend, List<Long> ids, long deadline) {
        String status;
        try {
            if (!Boolean.TRUE.equals(other.queryForObject(InboxStore.SAME_SERVER, Boolean.class, backend.serverStart()))) {
                log.warn("Inbox rows {}: the database restarted or failed over since their COMMIT; whether they are stored"
                        + " cannot be read from it; look them up in the console", ids);
                return;
            }
            status = other.queryForObject(InboxStore.TRANSACTION_STATUS, String.class, backend.xid());
        } catch (RuntimeException unreachable) {
            status = "in progress"; // not known yet: asked again
        }
        if ("committed".equals(status)) {
            storedAfterAll.increment(ids.size());
            log.warn("Inbox rows {} were stored after all: their COMMIT completed after their senders were answered 503;"
                    + " a retry without its Idempotency-Key is a second row of its subject", ids);
        } else if ("aborted".equals(status)) {
            log.info("Inbox rows {} were not stored: their COMMIT failed; their senders' retries are their only rows", ids);
        } else if (!"in progress".equals(status)) {
            log.warn("Inbox rows {}: the database no longer knows their transaction; look them up in the console", ids);
        } else if (System.nanoTime() - deadline >= 0) {
            log.warn("Inbox rows {}: their COMMIT is still unsettled after {} min; no longer followed up; look them up in"
                    + " the console", ids, lasting.toMinutes());
        } else {
            try {
                followUps.schedule(() -> followUp(backend, ids, deadline), every.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                log.warn("Inbox rows {} no longer followed up: the service is stopping; look them up in the console", ids);
            }
        }
    }

    @Override
    public void close() {
        List<Runnable> pending = followUps.shutdownNow();
        if (!pending.isEmpty()) {
            log.warn("{} unsettled group(s) of receptions no longer followed up: the service is stopping; their rows"
                    + " were named above", pending.size());
        }
    }
}
