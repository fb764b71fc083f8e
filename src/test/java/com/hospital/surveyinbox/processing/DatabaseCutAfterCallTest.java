package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.FreezableTcpProxy;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.Rows;
import com.hospital.surveyinbox.support.ServiceClient;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The database cut off (a failover, a broken link) for a few seconds just after a downstream call answered: the
 * statement that records it is tried again where it failed, so the call is recorded once and never made again.
 * Without the retry the row waited stuck-processing-after as PROCESSING and was registered again (a second
 * resend to the patient), and a delivered reply stayed SENDING and was delivered a second time.
 * A TCP proxy between the service and PostgreSQL plays the cut; the test reads the rows around it.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=database-cut-tests",
        "adapter.kafka.group-id=database-cut-tests",
        "spring.quartz.scheduler-name=database-cut-tests",
        "adapter.inbox.redeliver-enabled=true",
        "adapter.inbox.redeliver-cron=0/1 * * * * ?",
        // long: a row released by its predecessor's worker must not be taken for a lost event by the job instead
        "adapter.inbox.lost-event-after=PT60S",
        // long enough for a claim's tries through a 12 s cut (the pool reconnects up to 5 s after the database is back,
        // so the claim may find it only at its sixth try, ~23.5 s after the cut), short enough for each test to see the
        // second registration or claim that a lost record leads to within its wait
        "adapter.inbox.stuck-processing-after=PT30S"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class DatabaseCutAfterCallTest extends IntegrationTest {

    /** Between this class's context and PostgreSQL; cleared after the class. */
    static final FreezableTcpProxy PROXY = FreezableTcpProxy.inFrontOfPostgresForTheNextContext();
    /** The rows as the test reads them: straight to PostgreSQL, not through the cut. */
    private Rows direct;
    private static final ScheduledExecutorService RESTORER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "proxy-restore");
        thread.setDaemon(true);
        return thread;
    });

    @AfterAll
    static void removeProxy() {
        PROXY.removeFromContexts();
    }

    @BeforeEach
    void readDirectly() {
        direct = new Rows(new JdbcTemplate(EmbeddedServices.get().dataSource()));
    }

    @org.springframework.beans.factory.annotation.Autowired
    javax.sql.DataSource mainPool;
    @org.springframework.beans.factory.annotation.Autowired
    com.hospital.surveyinbox.inbox.ReceptionConnections receptionPool;

    /**
     * The next test starts once both of the service's pools hold a connection again: after a cut a pool reconnects with
     * pauses growing to 5 s, so a test whose row finished right after the database came back left the reception's pool
     * still waiting, and the next test's message was answered 503.
     */
    @org.junit.jupiter.api.AfterEach
    void awaitPoolsReconnected() {
        for (javax.sql.DataSource pool : java.util.List.of(mainPool, receptionPool.dataSource())) {
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                try (java.sql.Connection connection = pool.getConnection()) {
                    return connection.isValid(2);
                }
            });
        }
    }

    @Test
    void aResendAnsweredJustBeforeTheDatabaseIsCutOffIsRecordedOnceAndNotSentAgain() {
        String subject = uniqueSubject("CUTRESEND");
        String first = client.accept(ServiceClient.message(subject, "P1", ""));
        direct.awaitStatus(first, "COMPLETED");
        AtomicBoolean cut = cutOffWhen("POST /survey/dispatch-bundles/" + subject + "/resend", subject);

        String resend = client.accept(ServiceClient.message(subject, "P1", ""));

        direct.awaitStatus(resend, "COMPLETED", Duration.ofSeconds(60));
        assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE", "RESEND");
        assertThat(direct.attempts(resend)).isEqualTo(1);
        assertThat(cut).as("the database cut off at the resend's answer").isTrue();
    }

    @Test
    void aReplyDeliveredJustBeforeTheDatabaseIsCutOffIsRecordedSentAndNotDeliveredAgain() {
        String subject = uniqueSubject("CUTREPLY");
        AtomicBoolean cut = cutOffWhen("POST /legacy/survey-send-results", subject);

        String id = client.accept(ServiceClient.message(subject, "P2", "\"alimtalkYn\":\"N\""));

        await().atMost(Duration.ofSeconds(60)).until(() -> "SENT".equals(direct.row(id).get("reply_status")));
        assertThat(direct.status(id)).isEqualTo("COMPLETED");
        assertThat(simulator().replies(subject)).singleElement()
                .satisfies(r -> assertThat(r.get("reasonCode").asText()).isEqualTo("NOTIFY_SKIPPED"));
        assertThat(cut).as("the database cut off at the reply's answer").isTrue();
    }

    /**
     * After a registration that failed (a business error, caught in inbox-register): Camel kept the exchange marked
     * "failure handled", so the FAILED outcome's statement that met the cut got no error policy at all, neither
     * tried again nor logged; the row waited for the stuck reset and was charged a second attempt.
     */
    @Test
    void theOutcomeOfAFailedRegistrationThatMeetsTheCutIsTriedAgainAndChargedOnce() {
        String subject = uniqueSubject("CUTFAIL");
        String patno = "PCUT-" + subject;
        AtomicBoolean cut = cutOffWhen("GET /legacy/patients/" + patno, subject, 404, "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"patient not found\"}");

        String id = client.accept(ServiceClient.message(subject, patno, ""));

        // one read per poll: two reads straddling the claim (RECEIVED, then PROCESSING) ended the wait early
        await().atMost(Duration.ofSeconds(60)).until(() -> !java.util.Set.of("PROCESSING", "RECEIVED").contains(direct.status(id)));
        assertThat(direct.status(id)).isEqualTo("FAILED");
        assertThat(direct.attempts(id)).isEqualTo(1);
        assertThat(cut).as("the database cut off at the lookup's answer").isTrue();
    }

    /**
     * A cut of 10 s (a failover) right after the legacy system took a reply: the reply's record is tried for about a
     * minute, as an outcome's (tries at about 0.5, 1.5, 3.5, 7.5 and 15.5 s: the one after the cut, well before
     * stuck-processing-after's 30 s), so the reply is recorded SENT and never delivered again; the worker then goes on
     * and releases the subject's next row. With four tries (3.5 s) the reply stayed SENDING, was reset after
     * stuck-processing-after and delivered a second time. (A handled failure in the reply stopped the caller's route
     * as well: the next row waited for lost-event-after.)
     */
    @Test
    void aReplyDeliveredJustBeforeAFailoverLongerThanFourTriesIsRecordedSentOnceTheDatabaseIsBack() {
        String subject = uniqueSubject("CUTLONG");
        AtomicBoolean cut = cutOffWhen("POST /legacy/survey-send-results", subject, null, null, 10);

        String first = client.accept(ServiceClient.message(subject, "P3", "\"alimtalkYn\":\"N\""));
        String next = client.accept(ServiceClient.message(subject, "P3", "\"msgType\":\"SUBMIT\""));

        direct.awaitStatus(next, "COMPLETED", Duration.ofSeconds(45)); // lost-event-after is 60 s here
        assertThat(direct.status(first)).isEqualTo("COMPLETED");
        // SENT (a job never takes a SENT reply again); the next row may complete just before the record lands (it
        // waits only for the first row's COMPLETED). Without the minute of tries it stays SENDING until
        // stuck-processing-after (30 s here) resets it and the job delivers it a second time, then SENT
        await().atMost(Duration.ofSeconds(40)).until(() -> "SENT".equals(direct.row(first).get("reply_status")));
        assertThat(simulator().replies(subject)).singleElement()
                .satisfies(r -> assertThat(r.get("reasonCode").asText()).isEqualTo("NOTIFY_SKIPPED"));
        assertThat(cut).as("the database cut off at the reply's answer").isTrue();
    }

    /**
     * A failover while a claim's COMMIT is on its way: the commit goes through, its answer is lost, and the database
     * stays away 12 s, longer than a statement's four quick tries (~9.5 s with the pool's 2 s connect waits). The claim
     * is tried for a minute, as an outcome's record (its fifth try at ~13.5 s, or its sixth at ~23.5 s when the pool
     * has not reconnected yet: it backs off up to 5 s), finds its own claim and registers the row: one attempt, one
     * bundle. With the quick tries the row stayed PROCESSING, its attempt charged, until stuck-processing-after (30 s
     * here) and was claimed a second time (on its last attempt: DEAD, a failure reply for a message nothing was tried
     * for). A deferred trigger holds the claim's COMMIT for 1.5 s; the test checks that the cut landed inside it and that
     * the commit went through.
     */
    @Test
    void aClaimWhoseCommitAnswerIsLostInALongCutIsFoundAgainAndChargedOnce() throws Exception {
        String subject = uniqueSubject("CUTCLAIM");
        JdbcTemplate db = new JdbcTemplate(EmbeddedServices.get().dataSource());
        db.execute("CREATE OR REPLACE FUNCTION cut_claim_commit_test() RETURNS trigger LANGUAGE plpgsql AS "
                + "$$ BEGIN PERFORM pg_sleep(1.5); RETURN NULL; END $$");
        db.execute("CREATE CONSTRAINT TRIGGER cut_claim_commit_test AFTER UPDATE ON inbox_message "
                + "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.srvy_drawup_no = '" + subject + "' "
                + "AND OLD.status <> 'PROCESSING' AND NEW.status = 'PROCESSING') EXECUTE FUNCTION cut_claim_commit_test()");
        String sleepingCommit = "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query = 'COMMIT'";
        AtomicBoolean cutInsideTheCommit = new AtomicBoolean();
        Thread watcher = new Thread(() -> {
            // the claim's backend sleeping in its COMMIT: cut now, restore 12 s later
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                    .until(() -> db.queryForObject(sleepingCommit, Long.class) > 0);
            PROXY.cutOff();
            RESTORER.schedule(PROXY::restore, 12, TimeUnit.SECONDS);
            // still sleeping after the cut: the client lost the COMMIT's answer, not a later statement's
            cutInsideTheCommit.set(db.queryForObject(sleepingCommit, Long.class) > 0);
        }, "cut-at-claim-commit");
        try {
            watcher.start();
            String id = client.accept(ServiceClient.message(subject, "P4", ""));
            watcher.join(30_000);
            assertThat(watcher.isAlive()).isFalse();
            assertThat(cutInsideTheCommit).as("the cut landed inside the claim's COMMIT").isTrue();
            // the commit went through on the server: claimed, one attempt charged, while the service cannot know it
            await().atMost(Duration.ofSeconds(5)).until(() -> "PROCESSING".equals(direct.status(id)));
            assertThat(direct.attempts(id)).isEqualTo(1);

            direct.awaitStatus(id, "COMPLETED", Duration.ofSeconds(60));
            assertThat(direct.attempts(id)).isEqualTo(1);
            assertThat(simulator().events(subject)).extracting(DownstreamSimulator.Event::kind).containsExactly("BUNDLE");
        } finally {
            db.execute("DROP TRIGGER IF EXISTS cut_claim_commit_test ON inbox_message");
            db.execute("DROP FUNCTION IF EXISTS cut_claim_commit_test()");
        }
    }

    @AfterAll
    static void stopRestorer() {
        RESTORER.shutdownNow();
    }

    /**
     * The first request matching {@code methodAndPath} for {@code subject} (in its path or its body: every reply shares
     * one path, and a row of an earlier test, gone DEAD on the redelivery job, may owe one) cuts the database off
     * before it is answered (the answer still reaches the service), for 3 s: the service's next statement fails at
     * once and its connects fail until then.
     */
    private AtomicBoolean cutOffWhen(String methodAndPath, String subject) {
        return cutOffWhen(methodAndPath, subject, null, null);
    }

    private AtomicBoolean cutOffWhen(String methodAndPath, String subject, Integer status, String body) {
        return cutOffWhen(methodAndPath, subject, status, body, 3);
    }

    /**
     * As above, for {@code seconds}; answered {@code status} with {@code body} (every matching request), or as usual when
     * null. True once the cut happened: a test asserts it, or a request that no longer matched ran as a plain happy path.
     */
    private AtomicBoolean cutOffWhen(String methodAndPath, String subject, Integer status, String body, int seconds) {
        AtomicBoolean done = new AtomicBoolean();
        simulator().add(new DownstreamSimulator.Fault(key -> key.equals(methodAndPath), status == null ? 200 : status,
                body == null ? "" : body, 0, java.util.Map.of(), 0,
                requestBody -> {
                    if (!(methodAndPath.contains(subject) || requestBody.contains("\"" + subject + "\""))) {
                        return false;
                    }
                    if (done.compareAndSet(false, true)) {
                        PROXY.cutOff();
                        RESTORER.schedule(PROXY::restore, seconds, TimeUnit.SECONDS);
                    }
                    return status != null;
                }));
        return done;
    }
}
