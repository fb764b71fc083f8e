package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.processing.Outcome;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-process.camel.yaml} (shared setup: {@link RouteKit}). */
// repeated WARN lines capped as in production (the tests' default is no cap): a lost row's line must pass it
@org.springframework.test.context.TestPropertySource(properties = "adapter.logging.repeat-limit=20")
class InboxProcessRouteTest extends RouteKit {

    @org.springframework.beans.factory.annotation.Autowired
    com.hospital.surveyinbox.config.AdapterProperties properties;

    @Test
    void processClaimsOnceAndRecordsWhatTheRegistrationCameTo() throws Exception {
        String subject = uniqueSubject("ALONE-PROC");
        long id = stored(subject);
        mock("mock:register").expectedMessageCount(1);

        // the consumer route hands each event to a worker and returns: both duplicates may be in flight at once
        template.sendBody("direct:process-alone", event(id, subject));
        template.sendBody("direct:process-alone", event(id, subject)); // a duplicate event: the claim refuses it
        template.sendBody("direct:process-alone", "not an event");   // unreadable: skipped, no exception

        mock("mock:register").assertIsSatisfied();
        rows.awaitStatus(Long.toString(id), "COMPLETED");
        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> camel.getInflightRepository().size("inbox-process-row") == 0);
        mock("mock:register").assertIsSatisfied(); // both workers done: still only one registration
        assertThat(rows.attempts(Long.toString(id))).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT outcome FROM inbox_attempt WHERE inbox_id = ?", String.class, id))
                .isEqualTo("COMPLETED");
    }

    /**
     * An event whose row is not there (or whose id now holds another message) names a message the database lost
     * after acknowledging it (a restore, a failover to a replica behind): counted as row-missing for its alert,
     * never as the duplicate it was taken for (which a finished row's late event still is).
     */
    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void anEventWhoseRowTheDatabaseLostIsCountedApartFromADuplicate(
            org.springframework.boot.test.system.CapturedOutput output) throws Exception {
        String subject = uniqueSubject("LOST-ROW");
        long finished = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED' WHERE id = ?", finished);
        long lost = jdbc.queryForObject("SELECT max(id) FROM inbox_message", Long.class) + 1_000_000;
        String claims = com.hospital.surveyinbox.processing.ProcessingRecord.CLAIMS;
        double missing = meters.counter(claims, "result", "row-missing").count();
        double duplicate = meters.counter(claims, "result", "not-claimable").count();

        template.sendBody("direct:process-alone", event(finished, subject));
        await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> meters.counter(claims, "result", "not-claimable").count() == duplicate + 1);
        // more than a repeated line's limit per minute (20), lines alike but for their ids: each is the one record
        // of a lost message, so none may be dropped as a repeat
        for (int i = 0; i < 21; i++) {
            template.sendBody("direct:process-alone", event(lost + i, subject));
        }
        await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> meters.counter(claims, "result", "row-missing").count() == missing + 21);
        // the finished row's id named by another subject's event: the id went back with a restored database and
        // now holds a new message; the event's own message is lost all the same
        String other = uniqueSubject("LOST-REUSED");
        template.sendBody("direct:process-alone", event(finished, other));
        await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> meters.counter(claims, "result", "row-missing").count() == missing + 22);

        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> camel.getInflightRepository().size("inbox-process-row") == 0);
        assertThat(meters.counter(claims, "result", "not-claimable").count()).isEqualTo(duplicate + 1);
        assertThat(meters.counter(claims, "result", "row-missing").count()).isEqualTo(missing + 22);
        assertThat(output.getOut()).contains("Inbox " + finished + " (SEND " + other + ") named by an event has no row");
        assertThat(output.getOut().lines().filter(line -> line.contains("(SEND " + subject + ") named by an event has no row")))
                .hasSize(21);
    }

    /**
     * An event no worker takes within the hand-off wait (every worker busy on a slow downstream) leaves its row to the
     * redelivery job, and its ERROR line names the row: the saturation alert's runbook says it does. It named only the
     * exception's class (the claim, which puts the row's id in the log context, never ran).
     */
    @Test
    @org.junit.jupiter.api.Timeout(120)
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void anEventNoWorkerTakesIsLoggedWithItsRow(org.springframework.boot.test.system.CapturedOutput output) throws Exception {
        // every worker busy (as on a slow downstream): each given a task that waits
        int workers = properties.getKafka().getWorkers();
        java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(workers);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        String run = uniqueSubject("ALONE-BUSY");
        long waiting = stored(run);
        try {
            for (int i = 0; i < workers; i++) {
                processPool.execute(() -> {
                    busy.countDown();
                    try {
                        release.await(100, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            assertThat(busy.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("every worker busy").isTrue();
            template.sendBody("direct:process-alone", event(waiting, run)); // returns after the hand-off wait

            assertThat(output.getOut().lines()).anySatisfy(line -> assertThat(line).contains("ERROR")
                    .contains("Inbox event not handed to a worker (").contains("; inbox " + waiting + ")"));
            assertThat(rows.status(Long.toString(waiting))).isEqualTo("RECEIVED");
        } finally {
            release.countDown();
        }
    }

    @org.springframework.beans.factory.annotation.Autowired
    @org.springframework.beans.factory.annotation.Qualifier("inboxProcessPool")
    java.util.concurrent.Executor processPool;

    /**
     * An event published longer ago than retention's keep-finished (a topic kept that long, or a group replaying it
     * from the start) whose row is gone names a row retention deleted: counted apart, never as a lost row (its
     * alert is critical and its runbook scales the service to 0). One published within keep-finished still is.
     */
    @Test
    void anEventOlderThanRetentionWhoseRowIsGoneIsNotALostRow() throws Exception {
        String subject = uniqueSubject("PAST-RETENTION");
        long gone = jdbc.queryForObject("SELECT max(id) FROM inbox_message", Long.class) + 2_000_000;
        String claims = com.hospital.surveyinbox.processing.ProcessingRecord.CLAIMS;
        double missing = meters.counter(claims, "result", "row-missing").count();
        double past = meters.counter(claims, "result", "row-past-retention").count();
        long keepFinished = properties.getRetention().getKeepFinished().toMillis();
        long now = System.currentTimeMillis();

        template.sendBodyAndHeader("direct:process-alone", event(gone, subject), "kafka.TIMESTAMP",
                now - keepFinished - java.time.Duration.ofDays(1).toMillis());
        await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> meters.counter(claims, "result", "row-past-retention").count() == past + 1);
        template.sendBodyAndHeader("direct:process-alone", event(gone + 1, subject), "kafka.TIMESTAMP",
                now - keepFinished + java.time.Duration.ofHours(1).toMillis());
        await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> meters.counter(claims, "result", "row-missing").count() == missing + 1);

        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> camel.getInflightRepository().size("inbox-process-row") == 0);
        assertThat(meters.counter(claims, "result", "row-past-retention").count()).isEqualTo(past + 1);
        assertThat(meters.counter(claims, "result", "row-missing").count()).isEqualTo(missing + 1);
    }

    /** The restore runbook's first step, as docs/operations.md gives it: new rows get ids past every one handed out. */
    @Test
    void theRestoreRunbooksSequenceStepMovesNewIdsPastTheLostOnes() throws Exception {
        java.util.regex.Matcher step = java.util.regex.Pattern.compile("`(SELECT setval\\(pg_get_serial_sequence[^`]*);`")
                .matcher(java.nio.file.Files.readString(java.nio.file.Path.of("docs/operations.md")));
        assertThat(step.find()).as("the runbook's setval statement").isTrue();
        long highest = jdbc.queryForObject("SELECT max(id) FROM inbox_message", Long.class);

        jdbc.queryForObject(step.group(1), Long.class);

        assertThat(stored(uniqueSubject("AFTER-RESTORE"))).isGreaterThan(highest + 10_000_000);
    }

    @Test
    void processRecordsTheLastAllowedFailureAsDeadAndRepliesOnce() throws Exception {
        String subject = uniqueSubject("ALONE-DEAD");
        long id = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = 'FAILED', attempts = 4 WHERE id = ?", id);
        mock("mock:register").whenAnyExchangeReceived(e -> e.setProperty("outcome", Outcome.businessFailure("FORM_NOT_REGISTERED", "form X is not registered")));
        mock("mock:legacy-reply").expectedMessageCount(1);

        template.sendBody("direct:process-alone", event(id, subject));

        mock("mock:legacy-reply").assertIsSatisfied();
        rows.awaitStatus(Long.toString(id), "DEAD");
        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> "SENT".equals(rows.row(Long.toString(id)).get("reply_status")));
        JsonNode reply = mapper.readTree(mock("mock:legacy-reply").getReceivedExchanges().get(0).getMessage().getBody(String.class));
        assertThat(reply.get("reasonCode").asText()).isEqualTo("DEAD");
        assertThat(reply.get("reason").asText()).isEqualTo("form X is not registered");
        assertThat(rows.status(Long.toString(id))).isEqualTo("DEAD");
        assertThat(rows.row(Long.toString(id)).get("reply_status")).isEqualTo("SENT");
    }

    @Test
    void aFailedRowReleasesAnOlderRowRequeuedWhileItWasRegisteringAndNoRowStillBehindIt() throws Exception {
        String subject = uniqueSubject("ALONE-REQFAIL");
        long[] ids = stored(subject, 3);
        long older = ids[0];
        long later = ids[1];
        long behind = ids[2];
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', attempts = 5 WHERE id = ?", older);
        // while the later row is being registered an operator requeues the older one; its event arrives at once
        // and is refused (a row of its subject is PROCESSING); the later row's registration then fails
        mock("mock:register").whenAnyExchangeReceived(e -> {
            template.requestBody("sql:classpath:sql/requeue-row.sql?outputType=SelectOne",
                    camel.getRegistry().lookupByNameAndType("requeues", com.hospital.surveyinbox.ops.Requeues.class).params(older, "route-kit"), java.util.Map.class);
            template.sendBody("direct:process-alone", event(older, subject));
            await().atMost(java.time.Duration.ofSeconds(10)).until(() -> rows.row(Long.toString(older)).get("held_reason") != null);
            e.setProperty("outcome", Outcome.businessFailure("FORM_NOT_REGISTERED", "form X is not registered"));
        });

        template.sendBody("direct:process-alone", event(later, subject));

        // the failure releases the older row at once (not after lost-event-after); the row behind both is not
        // published: it would only be refused again
        await().atMost(java.time.Duration.ofSeconds(20)).until(() -> published(older));
        assertThat(rows.status(Long.toString(later))).isEqualTo("FAILED");
        assertThat(rows.status(Long.toString(older))).isEqualTo("RECEIVED");
        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> camel.getInflightRepository().size("inbox-process-row") == 0);
        assertThat(published(behind)).isFalse();
        assertThat(mock("mock:register").getReceivedCounter()).isOne();
    }

    @Test
    void aRowThatEndsWithAReplyReleasesTheNextRowOfItsSubjectAtOnce() throws Exception {
        // the reply route runs on the same exchange between the recorded outcome and the release: the outcome it
        // recorded must still decide the release (DEAD, and COMPLETED with a reply owed)
        String subject = uniqueSubject("ALONE-DEADNEXT");
        long[] ids = stored(subject, 3);
        jdbc.update("UPDATE inbox_message SET status = 'FAILED', attempts = 4 WHERE id = ?", ids[0]);
        mock("mock:register").whenAnyExchangeReceived(e -> e.setProperty("outcome", Outcome.businessFailure("FORM_NOT_REGISTERED", "form X is not registered")));

        template.sendBody("direct:process-alone", event(ids[0], subject));

        await().atMost(java.time.Duration.ofSeconds(20)).until(() -> published(ids[1]));
        assertThat(rows.status(Long.toString(ids[0]))).isEqualTo("DEAD");
        assertThat(rows.row(Long.toString(ids[0])).get("reply_status")).isEqualTo("SENT");

        mock("mock:register").whenAnyExchangeReceived(e -> e.setProperty("outcome",
                Outcome.completedWithReply(com.hospital.surveyinbox.inbox.ReplyReason.NOTIFY_SKIPPED, "created; no notification sent")));
        template.sendBody("direct:process-alone", event(ids[1], subject));

        await().atMost(java.time.Duration.ofSeconds(20)).until(() -> published(ids[2]));
        assertThat(rows.status(Long.toString(ids[1]))).isEqualTo("COMPLETED");
        assertThat(rows.row(Long.toString(ids[1])).get("reply_status")).isEqualTo("SENT");
    }

    /**
     * A worker whose claim was gone before a submission or a resend (inbox-register's claim fence: its row was reset
     * while it was paused and taken by another worker) records nothing: its outcome is fenced like any other and
     * counted stale; no reply, no later row released, the other worker's claim untouched.
     */
    @Test
    void aClaimLostBeforeAnUnkeyedCallRecordsNothing() throws Exception {
        String subject = uniqueSubject("ALONE-CLAIMLOST");
        long[] ids = stored(subject, 2);
        java.util.UUID other = java.util.UUID.randomUUID();
        mock("mock:register").whenAnyExchangeReceived(e -> {
            // meanwhile: reset as stuck and claimed by another worker (a new token, its attempt counted)
            jdbc.update("UPDATE inbox_message SET claim_token = ?, attempts = attempts + 1 WHERE id = ?", other, ids[0]);
            e.setProperty("outcome", Outcome.claimLost());
        });
        String outcomes = com.hospital.surveyinbox.processing.ProcessingRecord.OUTCOMES;
        double stale = meters.counter(outcomes, "outcome", "stale").count();

        template.sendBody("direct:process-alone", event(ids[0], subject));

        await().atMost(java.time.Duration.ofSeconds(20)).until(() -> meters.counter(outcomes, "outcome", "stale").count() == stale + 1);
        // the worker done: a reply or a release after the count would still be on its way at the count
        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> camel.getInflightRepository().size("inbox-process-row") == 0);
        assertThat(jdbc.queryForMap("SELECT status, claim_token, attempts, reply_status FROM inbox_message WHERE id = ?", ids[0]))
                .containsEntry("status", "PROCESSING").containsEntry("claim_token", other).containsEntry("attempts", 2)
                .containsEntry("reply_status", "NONE");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_attempt WHERE inbox_id = ? AND finished_at IS NOT NULL",
                Long.class, ids[0])).as("attempts closed by the stale outcome").isZero();
        assertThat(mock("mock:legacy-reply").getReceivedCounter()).isZero();
        assertThat(published(ids[1])).as("the later row released").isFalse();
    }

    /**
     * The COMMIT of a row's outcome goes through and its answer is lost: the step's database redelivery runs the
     * statement again, finds the row finished and gets nothing back. The outcome is read back (find-own-outcome.sql)
     * and goes on as recorded: counted completed, its NOTIFY_SKIPPED reply sent at once, the subject's next row
     * released at once. Taken as stale, the reply waited for the redelivery job, the next row for lost-event-after,
     * and the stale-outcomes alert fired with the wrong runbook.
     */
    @Test
    void anOutcomeWhoseCommitAnswerWasLostGoesOnAsRecorded() throws Exception {
        String subject = uniqueSubject("ALONE-LOSTOUT");
        long[] ids = stored(subject, 2);
        mock("mock:register").whenAnyExchangeReceived(e -> e.setProperty("outcome",
                Outcome.completedWithReply(com.hospital.surveyinbox.inbox.ReplyReason.NOTIFY_SKIPPED, "created; no notification sent")));
        String outcomes = com.hospital.surveyinbox.processing.ProcessingRecord.OUTCOMES;
        double completed = meters.counter(outcomes, "outcome", "completed").count();
        double stale = meters.counter(outcomes, "outcome", "stale").count();
        java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger(1);
        String event = event(ids[0], subject);

        // camel-sql runs the row's statements on the DataSource in this header (the worker gets a copy of the event's)
        template.send("direct:process-alone", e -> {
            e.getMessage().setBody(event);
            e.getMessage().setHeader("CamelSqlDataSource", answerLostAfterCommit(jdbc.getDataSource(), "WITH done AS", lost));
        });

        await().atMost(java.time.Duration.ofSeconds(20)).until(() -> published(ids[1]));
        assertThat(lost.get()).as("complete-row.sql's first answer was lost").isZero();
        assertThat(rows.status(Long.toString(ids[0]))).isEqualTo("COMPLETED");
        assertThat(rows.row(Long.toString(ids[0])).get("reply_status")).isEqualTo("SENT");
        assertThat(meters.counter(outcomes, "outcome", "completed").count()).isEqualTo(completed + 1);
        assertThat(meters.counter(outcomes, "outcome", "stale").count()).isEqualTo(stale);
    }

    /**
     * Each statement of a row gets its own tries while the database does not answer: the outcome's statement met the
     * database away three times (taken on its fourth try), then the successor's lookup once. Camel counts a step's
     * tries in message headers that outlive the step, so the lookup found three tries spent, failed for good at its
     * first failure and the next row waited lost-event-after for the redelivery job.
     */
    @Test
    void eachStatementOfARowGetsItsOwnTriesWhileTheDatabaseDoesNotAnswer() throws Exception {
        String subject = uniqueSubject("ALONE-TRIES");
        long[] ids = stored(subject, 2);
        java.util.concurrent.atomic.AtomicInteger outcomeFailures = new java.util.concurrent.atomic.AtomicInteger(3);
        java.util.concurrent.atomic.AtomicInteger lookupFailures = new java.util.concurrent.atomic.AtomicInteger(1);
        String event = event(ids[0], subject);

        template.send("direct:process-alone", e -> {
            e.getMessage().setBody(event);
            e.getMessage().setHeader("CamelSqlDataSource", failingBeforeRun(
                    failingBeforeRun(jdbc.getDataSource(), "WITH done AS", outcomeFailures), "e.id < c.id", lookupFailures));
        });

        await().atMost(java.time.Duration.ofSeconds(20)).until(() -> published(ids[1]));
        assertThat(outcomeFailures.get()).as("complete-row.sql failed three times").isZero();
        assertThat(lookupFailures.get()).as("find-successor.sql failed once").isZero();
        assertThat(rows.status(Long.toString(ids[0]))).isEqualTo("COMPLETED");
    }

    /**
     * The record of an outcome outlasts a database away for longer than a statement's four tries (a failover right
     * after the downstream call): the registration happened, and a record given up left the row PROCESSING until
     * stuck-processing-after, then registered again (a second resend or submission). Here complete-row.sql meets the
     * database away four times and is taken on its fifth try, 7.5 s later.
     */
    @Test
    void anOutcomeIsRecordedThroughADatabaseAwayLongerThanFourTries() throws Exception {
        String subject = uniqueSubject("ALONE-RECORDLONG");
        long[] ids = stored(subject, 1);
        processedThroughFailures(ids[0], subject, "WITH done AS", 4);

        assertThat(rows.status(Long.toString(ids[0]))).isEqualTo("COMPLETED");
        assertThat(mock("mock:register").getReceivedCounter()).as("registered once").isEqualTo(1);
    }

    /**
     * ... a deferral's record too (most deferrals come from the database being away): the row on its last attempt is
     * deferred through a database away for four tries, and its claim's attempt is given back. Given up after four
     * tries, the attempt stayed charged, and the stuck reset sent the row DEAD with a failure reply for a message
     * nothing was tried for.
     */
    @Test
    void aDeferralIsRecordedThroughADatabaseAwayLongerThanFourTries() throws Exception {
        String subject = uniqueSubject("ALONE-DEFERLONG");
        long[] ids = stored(subject, 1);
        jdbc.update("UPDATE inbox_message SET attempts = 4 WHERE id = ?", ids[0]); // this claim is its fifth and last
        mock("mock:register").whenAnyExchangeReceived(e -> e.setProperty("outcome", Outcome.databaseUnavailable()));
        processedThroughFailures(ids[0], subject, "WITH deferred AS", 4);

        assertThat(rows.status(Long.toString(ids[0]))).isEqualTo("FAILED");
        assertThat(rows.attempts(Long.toString(ids[0]))).as("the claim's attempt given back").isEqualTo(4);
    }

    /**
     * Processes row {@code id}'s event while its statement containing {@code fragment} meets the database away
     * {@code failures} times before it runs; returns once every failure was met and the worker is done.
     */
    private void processedThroughFailures(long id, String subject, String fragment, int failures) throws Exception {
        java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(failures);
        String event = event(id, subject);
        template.send("direct:process-alone", e -> {
            e.getMessage().setBody(event);
            e.getMessage().setHeader("CamelSqlDataSource", failingBeforeRun(jdbc.getDataSource(), fragment, left));
        });
        await().atMost(java.time.Duration.ofSeconds(30)).until(() -> left.get() == 0
                && camel.getInflightRepository().size("inbox-process-row") == 0);
    }

    /** ... and still four tries at most: a statement the database keeps refusing fails for good after its fourth. */
    @Test
    void aStatementTheDatabaseKeepsRefusingIsTriedFourTimesInAll() throws Exception {
        String subject = uniqueSubject("ALONE-TRIES4");
        long[] ids = stored(subject, 2);
        java.util.concurrent.atomic.AtomicInteger lookupFailures = new java.util.concurrent.atomic.AtomicInteger(10);
        String event = event(ids[0], subject);

        template.send("direct:process-alone", e -> {
            e.getMessage().setBody(event);
            e.getMessage().setHeader("CamelSqlDataSource", failingBeforeRun(jdbc.getDataSource(), "e.id < c.id", lookupFailures));
        });

        await().atMost(java.time.Duration.ofSeconds(20)).until(() -> lookupFailures.get() < 10
                && camel.getInflightRepository().size("inbox-process-row") == 0);
        assertThat(lookupFailures.get()).as("find-successor.sql tried four times").isEqualTo(6);
        assertThat(published(ids[1])).isFalse();
        assertThat(rows.status(Long.toString(ids[0]))).isEqualTo("COMPLETED");
    }

    /**
     * The read-back finds a worker's own outcome only: one whose claim was taken from it (reset, requeued, and the row
     * finished by a later claim with its attempt numbers starting again) finds nothing and its outcome stays stale.
     * Matched by attempt number, it took the later claim's COMPLETED for its own: counted twice, its reply sent.
     */
    @Test
    void aStaleWorkerNeverTakesALaterClaimsOutcomeForItsOwn() {
        String subject = uniqueSubject("ALONE-NOTMINE");
        long id = stored(subject);
        java.util.UUID stale = java.util.UUID.randomUUID();
        java.util.UUID later = java.util.UUID.randomUUID();
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', attempts = 1, claim_token = ? WHERE id = ?", later, id);
        // the later claim's attempt, numbered 1 again after the requeue (what a read-back by attempt number took for its own)
        jdbc.update("INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, finished_at, outcome) VALUES (?, 1, now(), now(), 'COMPLETED')", id);
        String sql = "sql:classpath:sql/find-own-outcome.sql?outputType=SelectOne&parametersCount=2";

        assertThat(template.requestBody(sql, Map.of("id", id, "token", stale.toString(), "attempt", 1))).isNull();
        assertThat(template.requestBody(sql, Map.of("id", id, "token", later.toString(), "attempt", 1))).isEqualTo("COMPLETED");
    }

    private boolean published(long id) {
        return mock("mock:kafka").getReceivedExchanges().stream()
                .anyMatch(x -> x.getMessage().getBody(String.class).contains("\"inboxId\":\"" + id + "\""));
    }
}
