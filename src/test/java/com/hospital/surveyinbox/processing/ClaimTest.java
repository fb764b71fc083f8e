package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.inbox.Acceptance;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.RowOutcomes;
import java.util.Optional;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.support.DefaultExchange;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The claim (the idempotent repository of {@code inbox-process}'s idempotentConsumer step) and the fenced
 * outcome statements, against real PostgreSQL, under contention.
 */
class ClaimTest extends IntegrationTest {

    @Autowired
    InboxStore store;

    @Autowired
    ClaimRepository claims;

    @Autowired
    CamelContext camel;

    @Autowired
    ProducerTemplate producer;

    @Autowired
    ProcessingRecord record;

    private RowOutcomes outcomes() {
        return new RowOutcomes(producer, record);
    }

    /** What the idempotentConsumer step does: add(exchange, key); the claimed row arrives on the exchange. */
    private Optional<ClaimedRow> claimThroughTheRepository(long id) {
        Exchange exchange = new DefaultExchange(camel);
        return claims.add(exchange, Long.toString(id))
                ? Optional.of(exchange.getProperty(ClaimRepository.ROW, ClaimedRow.class))
                : Optional.empty();
    }

    private long insert(String subject) {
        // stored directly (no event): the service's own consumer never sees these rows
        Acceptance a = store.accept(new ReceivedMessage(subject, "SEND",
                ("{\"srvyDrawupNo\":\"" + subject + "\"}").getBytes(StandardCharsets.UTF_8), null));
        return a.inboxId();
    }

    @Test
    void claimsEachRowExactlyOnceUnderAHeavyRace() throws Exception {
        int rowsCount = 2_000;
        int threads = 16;
        int attemptsPerThread = 2_000; // 32,000 attempts in all
        String prefix = uniqueSubject("RACE");
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < rowsCount; i++) {
            ids.add(insert(prefix + "-" + i));
        }
        Map<Long, AtomicInteger> claimsPerRow = new ConcurrentHashMap<>();
        AtomicInteger attempts = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int offset = t * 7;
            futures.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < attemptsPerThread; i++) {
                    long id = ids.get((offset + i) % rowsCount);
                    attempts.incrementAndGet();
                    claimThroughTheRepository(id).ifPresent(row -> claimsPerRow.computeIfAbsent(row.inboxId(), k -> new AtomicInteger()).incrementAndGet());
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(5, TimeUnit.MINUTES);
        }
        pool.shutdown();

        assertThat(attempts.get()).isGreaterThanOrEqualTo(30_000);
        assertThat(claimsPerRow).hasSize(rowsCount);
        assertThat(claimsPerRow.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status = 'PROCESSING' AND attempts = 1",
                Long.class, prefix + "-%")).isEqualTo(rowsCount);
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', claim_token = NULL WHERE srvy_drawup_no LIKE ?", prefix + "-%");
    }

    @Test
    void aFailedRowIsClaimedOnlyOnceItsRetryDelayHasPassed() {
        ClaimRepository withDelay = new ClaimRepository(new org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate(jdbc),
                new com.hospital.surveyinbox.inbox.PayloadCipher(com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of())),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), java.time.Duration.ofMinutes(1));
        String subject = uniqueSubject("DUE");
        long id = insert(subject);
        ClaimedRow first = withDelay.claim(id).orElseThrow();
        assertThat(outcomes().fail(first, "form not registered")).isEqualTo("FAILED");

        // a stray event (a rebalance, a duplicate, a successor release) finds it not yet due: nothing charged
        assertThat(withDelay.claim(id)).isEmpty();
        assertThat(withDelay.claim(id)).isEmpty();
        assertThat(rows.attempts(Long.toString(id))).isEqualTo(1);
        assertThat(rows.status(Long.toString(id))).isEqualTo("FAILED");

        // a minute after its last attempt it is due
        jdbc.update("UPDATE inbox_message SET last_attempt_at = now() - INTERVAL '61 seconds' WHERE id = ?", id);
        assertThat(withDelay.claim(id)).isPresent();
        assertThat(rows.attempts(Long.toString(id))).isEqualTo(2);
    }

    /**
     * The retry delay runs from the failure, not from the attempt's start: an attempt that took longer than the delay
     * (slow downstreams, every call near its timeout) left its row due the moment it failed, and any stray event (a
     * rebalance's re-read, a duplicate) or the next redelivery tick ran the next attempt at once, toward DEAD.
     */
    @Test
    void aFailedRowIsDueOnlyARetryDelayAfterItsFailureHowEverLongTheAttemptTook() {
        ClaimRepository withDelay = new ClaimRepository(new org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate(jdbc),
                new com.hospital.surveyinbox.inbox.PayloadCipher(com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of())),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), java.time.Duration.ofMinutes(1));
        for (boolean charged : new boolean[] {true, false}) {
            long id = insert(uniqueSubject("SLOW"));
            ClaimedRow first = withDelay.claim(id).orElseThrow();
            // the attempt began 90 s ago (its downstream calls took that long)
            jdbc.update("UPDATE inbox_message SET last_attempt_at = now() - INTERVAL '90 seconds' WHERE id = ?", id);
            if (charged) {
                assertThat(outcomes().fail(first, "survey service timed out")).isEqualTo("FAILED");
            } else {
                assertThat(producer.requestBody("sql:classpath:sql/defer-row.sql?outputType=SelectOne&parametersCount=5",
                        record.params(first, Outcome.deferred("survey")), String.class)).isEqualTo("FAILED");
            }
            assertThat(withDelay.claim(id)).as("charged " + charged).isEmpty();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE id = ? AND status = 'FAILED'"
                    + " AND last_attempt_at > now() - INTERVAL '10 seconds'", Long.class, id)).isOne();
        }
    }

    @Test
    void rejectsAStaleWorkersOutcomeAfterItsRowWasReclaimed() {
        String subject = uniqueSubject("STALE");
        long id = insert(subject);
        ClaimedRow stale = claims.claim(id).orElseThrow();
        // the redelivery job's reset of a stuck row
        jdbc.update("UPDATE inbox_message SET status = 'RECEIVED' WHERE id = ?", id);
        ClaimedRow fresh = claims.claim(id).orElseThrow();

        assertThat(outcomes().complete(stale)).isFalse();
        assertThat(outcomes().fail(stale, "late failure")).isNull();
        assertThat(jdbc.queryForObject("SELECT status FROM inbox_message WHERE id = ?", String.class, id)).isEqualTo("PROCESSING");

        assertThat(outcomes().complete(fresh)).isTrue();
        assertThat(outcomes().complete(fresh)).isFalse();
        assertThat(jdbc.queryForObject("SELECT status FROM inbox_message WHERE id = ?", String.class, id)).isEqualTo("COMPLETED");
        assertThat(jdbc.queryForObject("SELECT attempts FROM inbox_message WHERE id = ?", Integer.class, id)).isEqualTo(2);
        assertThat(claims.claim(id)).isEmpty();
    }

    @Test
    void releasesTheNextReceivedRowEvenWhenItsHoldWasNeverRecorded() {
        // claim and hold are two statements: a successor refused just before its predecessor finished may
        // not carry held_reason yet; the release must still find it (else it waits for lost-event-after)
        String subject = uniqueSubject("NOHOLD");
        long first = insert(subject);
        long second = insert(subject);
        ClaimedRow claimed = claims.claim(first).orElseThrow();
        assertThat(outcomes().complete(claimed)).isTrue();
        assertThat(jdbc.queryForObject("SELECT held_reason FROM inbox_message WHERE id = ?", String.class, second)).isNull();

        Map<?, ?> successor = successorOf(first, subject, 0);

        assertThat(successor.get("inboxId")).isEqualTo(second);
        assertThat(outcomes().complete(claims.claim(second).orElseThrow())).isTrue();
    }

    @Test
    void releasesADueFailedRowEvenWhenItsHoldWasNeverRecorded() {
        // a due retry refused behind an earlier row of its subject (requeued by an operator) that finishes before
        // the refusal's hold is written: it is released at once, not after another retry-delay
        String subject = uniqueSubject("NOHOLDF");
        long first = insert(subject);
        long second = insert(subject);
        jdbc.update("UPDATE inbox_message SET status = 'FAILED', attempts = 1, last_attempt_at = now() - INTERVAL '2 minutes' "
                + "WHERE id = ?", second);
        ClaimedRow claimed = claims.claim(first).orElseThrow();
        assertThat(claims.claim(second)).as("refused behind the earlier row").isEmpty();
        assertThat(outcomes().complete(claimed)).isTrue();
        assertThat(jdbc.queryForObject("SELECT held_reason FROM inbox_message WHERE id = ?", String.class, second)).isNull();

        assertThat(successorOf(first, subject, 60_000).get("inboxId")).isEqualTo(second);

        // one that is not due yet is not released: its claim would only be refused again
        jdbc.update("UPDATE inbox_message SET last_attempt_at = now() WHERE id = ?", second);
        assertThat(successorOf(first, subject, 60_000)).isNull();
    }

    private Map<?, ?> successorOf(long finished, String subject, long retryDelayMillis) {
        return producer.requestBody("sql:classpath:sql/find-successor.sql?outputType=SelectOne&parametersCount=3",
                Map.of("id", finished, "srvyDrawupNo", subject, "retryDelayMillis", retryDelayMillis), Map.class);
    }

    @Test
    void holdsALaterRowOfTheSameSubjectUntilTheEarlierOneFinishes() {
        String subject = uniqueSubject("HOLD");
        long first = insert(subject);
        long second = insert(subject);

        assertThat(claims.claim(second)).isEmpty();
        assertThat(producer.requestBody("sql:classpath:sql/record-hold.sql?outputType=SelectOne&parametersCount=2",
                Map.of("id", second), Long.class)).isEqualTo(first);
        ClaimedRow claimed = claims.claim(first).orElseThrow();
        assertThat(claims.claim(second)).isEmpty();
        assertThat(outcomes().fail(claimed, "x")).isEqualTo("FAILED");
        assertThat(claims.claim(second)).as("FAILED still blocks").isEmpty();
        ClaimedRow retry = claims.claim(first).orElseThrow();
        assertThat(outcomes().complete(retry)).isTrue();
        Map<?, ?> successor = successorOf(first, subject, 0);
        assertThat(successor.get("inboxId")).isEqualTo(second);
        ClaimedRow next = claims.claim(second).orElseThrow();
        assertThat(outcomes().complete(next)).isTrue();
    }

    /**
     * The rollback toggle: a message of the subject is being registered synchronously (its lease) when an operator
     * requeues an older DEAD row of it. The row is not claimed beside that registration (two registrations of one
     * subject at once, the later message possibly first); once the lease is given back it is claimed. A lease past
     * its expiry (a holder gone) blocks nothing.
     */
    @Test
    void aRowIsNotClaimedWhileItsSubjectIsRegisteredOnTheSynchronousPath() {
        String subject = uniqueSubject("SYNCLEASE");
        long older = insert(subject);
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', attempts = 5 WHERE id = ?", older);
        jdbc.update("INSERT INTO synchronous_lease (srvy_drawup_no, holder, taken_at, expires_at) "
                + "VALUES (?, 'pod-a:1', now(), now() + INTERVAL '1 minute')", subject);
        Map<?, ?> requeued = producer.requestBody("sql:classpath:sql/requeue-row.sql?outputType=SelectOne",
                requeueParams(older), Map.class);
        assertThat(requeued.get("requeued")).isEqualTo(true);

        assertThat(claims.claim(older)).as("the subject is being registered synchronously").isEmpty();
        assertThat(jdbc.queryForObject("SELECT status FROM inbox_message WHERE id = ?", String.class, older)).isEqualTo("RECEIVED");

        jdbc.update("UPDATE synchronous_lease SET expires_at = now() - INTERVAL '1 second' WHERE srvy_drawup_no = ?", subject);
        assertThat(claims.claim(older)).as("a lease past its expiry blocks nothing").isPresent();
        jdbc.update("DELETE FROM synchronous_lease WHERE srvy_drawup_no = ?", subject);
    }

    @Test
    void anOlderRowRequeuedWhileALaterOneIsRegisteringWaitsForIt() {
        // an operator requeues an older DEAD row (DEAD no longer held its successors back) while the later row
        // of the subject is PROCESSING: the older row must not be registered beside it, and is released after it
        String subject = uniqueSubject("REQLATE");
        long older = insert(subject);
        long later = insert(subject);
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', attempts = 5 WHERE id = ?", older);
        ClaimedRow registering = claims.claim(later).orElseThrow();
        Map<?, ?> requeued = producer.requestBody("sql:classpath:sql/requeue-row.sql?outputType=SelectOne",
                requeueParams(older), Map.class);
        assertThat(requeued.get("requeued")).isEqualTo(true);

        assertThat(claims.claim(older)).as("a later row of the subject is PROCESSING").isEmpty();
        assertThat(producer.requestBody("sql:classpath:sql/record-hold.sql?outputType=SelectOne&parametersCount=2",
                Map.of("id", older), Long.class)).isEqualTo(later);
        assertThat(jdbc.queryForObject("SELECT held_reason FROM inbox_message WHERE id = ?", String.class, older))
                .isEqualTo("waiting behind inbox " + later);

        assertThat(outcomes().complete(registering)).isTrue();
        Map<?, ?> successor = successorOf(later, subject, 0);
        assertThat(successor.get("inboxId")).as("the held older row is released when the later one finishes").isEqualTo(older);
        assertThat(outcomes().complete(claims.claim(older).orElseThrow())).isTrue();
    }

    @Test
    void twoClaimsOfOneSubjectAtOnceNeverBothWin() throws Exception {
        // the interleaving that fooled a guard read from each statement's snapshot: the later row's claim has run
        // but not committed (it saw the older row DEAD), the older row is requeued, and its claim starts before
        // the later one commits — it would see the later row still RECEIVED and claim too
        String subject = uniqueSubject("CLAIMRACE");
        long older = insert(subject);
        long later = insert(subject);
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', attempts = 5 WHERE id = ?", older);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (java.sql.Connection laterClaim = jdbc.getDataSource().getConnection()) {
            laterClaim.setAutoCommit(false);
            try (java.sql.PreparedStatement lock = laterClaim.prepareStatement(
                    "SELECT pg_advisory_xact_lock(?, hashtext(?))");
                 java.sql.PreparedStatement claim = laterClaim.prepareStatement(
                    "UPDATE inbox_message SET status = 'PROCESSING', attempts = attempts + 1 WHERE id = ?")) {
                lock.setInt(1, ClaimRepository.CLAIM_LOCK_SPACE);
                lock.setString(2, subject);
                lock.execute();
                claim.setLong(1, later);
                assertThat(claim.executeUpdate()).isOne();
            }
            Map<?, ?> requeued = producer.requestBody("sql:classpath:sql/requeue-row.sql?outputType=SelectOne",
                    requeueParams(older), Map.class);
            assertThat(requeued.get("requeued")).isEqualTo(true);

            Future<Optional<ClaimedRow>> olderClaim = pool.submit(() -> claims.claim(older));
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> jdbc.queryForObject(
                    // this subject's claim lock: another subject's waiter would end the wait before this claim waits
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = ? AND objid = CAST(hashtext(?) AS oid)"
                            + " AND NOT granted", Long.class, ClaimRepository.CLAIM_LOCK_SPACE, subject) > 0);
            assertThat(olderClaim).as("waits for the subject's claim in progress").isNotDone();
            laterClaim.commit();

            assertThat(olderClaim.get(20, TimeUnit.SECONDS)).as("then sees the later row PROCESSING").isEmpty();
        } finally {
            pool.shutdownNow();
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no = ? AND status = 'PROCESSING'",
                Long.class, subject)).isOne();
    }

    /**
     * A connection lost at the claim's COMMIT: the claim is tried again (the step's database redelivery, same
     * exchange). When the commit went through, the retry finds its own claim by the token kept on the exchange and
     * goes on with the row (one attempt charged, one attempt opened), also when that commit was still under way as the
     * retry began (it waits for the subject's claim lock); when it did not, the retry claims the row. Without the
     * kept token the first case was refused as "taken", the row left PROCESSING until stuck-processing-after and an
     * attempt charged for nothing; with the own-claim read before the lock, the late commit's was.
     */
    @Test
    void aClaimWhoseCommitAnswerWasLostIsFoundAgainByItsRetry() throws InterruptedException {
        for (CommitAnswerLost.Mode mode : CommitAnswerLost.Mode.values()) {
            boolean committed = mode != CommitAnswerLost.Mode.ROLLED_BACK;
            CommitAnswerLost lost = new CommitAnswerLost(jdbc.getDataSource(), mode, jdbc);
            ClaimRepository overLostAnswers = new ClaimRepository(
                    new org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate(lost),
                    new com.hospital.surveyinbox.inbox.PayloadCipher(com.hospital.surveyinbox.support.TestProperties.bind(Map.of())),
                    new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), java.time.Duration.ofMinutes(1));
            long id = insert(uniqueSubject("LOST"));
            Exchange exchange = new DefaultExchange(camel);

            lost.failNextCommit();
            // what the step's database redelivery (inbox-process-row-claim-unanswered) tries again
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> overLostAnswers.add(exchange, Long.toString(id)))
                    .as(mode.name()).matches(com.hospital.surveyinbox.inbox.DatabaseFailures::unavailable);
            // the route's minute of tries (inbox-process-row-claim-unanswered) is for exactly this: a row claimed, only
            // the COMMIT left
            assertThat(exchange.getProperty(ClaimRepository.UNANSWERED)).as(mode.name()).isEqualTo(Boolean.TRUE);
            if (mode != CommitAnswerLost.Mode.LATE) { // LATE: still committing while the retry starts
                assertThat(rows.status(Long.toString(id))).isEqualTo(committed ? "PROCESSING" : "RECEIVED");
            }
            if (committed && mode != CommitAnswerLost.Mode.LATE) {
                // the claim's tries took most of stuck-processing-after: the own claim found again renews the row's
                // sign of life, so the stuck reset does not take it from under the registration that follows
                jdbc.update("UPDATE inbox_message SET updated_at = now() - INTERVAL '1 hour' WHERE id = ?", id);
            }

            assertThat(overLostAnswers.add(exchange, Long.toString(id))).as(mode.name()).isTrue();
            assertThat(exchange.getProperty(ClaimRepository.UNANSWERED)).as(mode.name()).isNull();
            if (committed && mode != CommitAnswerLost.Mode.LATE) {
                assertThat(jdbc.queryForObject("SELECT updated_at > now() - INTERVAL '1 minute' FROM inbox_message WHERE id = ?",
                        Boolean.class, id)).as(mode.name()).isTrue();
            }
            lost.awaitLateCommit();
            ClaimedRow row = exchange.getProperty(ClaimRepository.ROW, ClaimedRow.class);
            assertThat(row.inboxId()).isEqualTo(id);
            assertThat(row.attempt()).isEqualTo(1);
            assertThat(new String(row.payload(), StandardCharsets.UTF_8)).contains("LOST");
            assertThat(rows.attempts(Long.toString(id))).isEqualTo(1);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_attempt WHERE inbox_id = ?", Long.class, id)).isOne();
            // the row's outcome is recorded with that token
            assertThat(outcomes().complete(row)).isTrue();

            // another exchange (another event of the row) never adopts it
            assertThat(claimThroughTheRepository(id)).isEmpty();

            if (mode == CommitAnswerLost.Mode.THROUGH) {
                // a refused claim whose answer is lost has claimed nothing: the quick tries of any statement, no mark
                Exchange refused = new DefaultExchange(camel);
                lost.failNextCommit();
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> overLostAnswers.add(refused, Long.toString(id)))
                        .matches(com.hospital.surveyinbox.inbox.DatabaseFailures::unavailable);
                assertThat(refused.getProperty(ClaimRepository.UNANSWERED)).isNull();
            }
        }
    }

    /**
     * A DataSource whose next commit loses its answer: committed on the server (THROUGH), rolled back (ROLLED_BACK), or
     * committed a second later while the client has already given up on the connection (LATE: a slow commit past the
     * socket timeout; the connection is then unusable to the client and closed once the server is done).
     */
    static final class CommitAnswerLost extends org.springframework.jdbc.datasource.DelegatingDataSource {
        enum Mode { THROUGH, ROLLED_BACK, LATE }

        private final Mode mode;
        private final org.springframework.jdbc.core.JdbcTemplate watcher;
        private final java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        private volatile Thread late;
        private final java.util.concurrent.atomic.AtomicReference<Throwable> lateFailure = new java.util.concurrent.atomic.AtomicReference<>();

        CommitAnswerLost(javax.sql.DataSource target, Mode mode, org.springframework.jdbc.core.JdbcTemplate watcher) {
            super(target);
            this.mode = mode;
            this.watcher = watcher;
        }

        /** LATE: the late commit has happened, having seen the retry wait for the subject's claim lock. */
        void awaitLateCommit() throws InterruptedException {
            if (late != null) {
                late.join(30_000);
                assertThat(late.isAlive()).isFalse();
                assertThat(lateFailure.get()).isNull();
            }
        }

        void failNextCommit() {
            armed.set(true);
        }

        @Override
        public java.sql.Connection getConnection() throws java.sql.SQLException {
            java.sql.Connection real = super.getConnection();
            java.util.concurrent.atomic.AtomicBoolean lost = new java.util.concurrent.atomic.AtomicBoolean();
            return (java.sql.Connection) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {java.sql.Connection.class}, (proxy, method, args) -> {
                        if (lost.get()) { // given up by the client: nothing more goes over it
                            if (method.getName().equals("close") || method.getName().equals("isClosed")) {
                                return method.getName().equals("isClosed") ? Boolean.TRUE : null;
                            }
                            throw new java.sql.SQLException("This connection has been closed.", "08003");
                        }
                        if (method.getName().equals("commit") && armed.compareAndSet(true, false)) {
                            switch (mode) {
                                case THROUGH -> real.commit();
                                case ROLLED_BACK -> real.rollback();
                                case LATE -> {
                                    lost.set(true);
                                    // the server still writing the commit until the retry's claim waits for the
                                    // subject's lock this transaction holds: then it commits
                                    late = new Thread(() -> {
                                        try {
                                            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
                                                    .pollInterval(java.time.Duration.ofMillis(20))
                                                    // a claim waiting for a claim lock (not a reception's subject lock)
                                                    .until(() -> watcher.queryForObject("SELECT count(*) FROM pg_locks"
                                                            + " WHERE locktype = 'advisory' AND classid = ? AND NOT granted", Long.class,
                                                            ClaimRepository.CLAIM_LOCK_SPACE) > 0);
                                            real.commit();
                                            real.close();
                                        } catch (Throwable e) {
                                            lateFailure.set(e);
                                        }
                                    }, "late-commit");
                                    late.start();
                                }
                            }
                            throw new java.sql.SQLException("An I/O error occurred while sending to the backend.", "08006");
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }

    /** requeue-row.sql's parameters for a single row (no expected status: DEAD or FAILED). */
    private static Map<String, Object> requeueParams(long id) {
        Map<String, Object> params = new java.util.HashMap<>();
        params.put("id", id);
        params.put("actor", "claim-test");
        params.put("expectedStatus", null);
        return params;
    }
}
