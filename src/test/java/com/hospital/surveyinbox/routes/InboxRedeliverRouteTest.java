package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.camel.builder.NotifyBuilder;
import org.apache.camel.component.mock.MockEndpoint;
import org.junit.jupiter.api.Test;

/** The route kit for {@code routes/inbox-redeliver.camel.yaml} (shared setup: {@link RouteKit}). */
class InboxRedeliverRouteTest extends RouteKit {

    /** The time the tick's budgets read: the system's, moved on by {@link #advance} (a legacy system answering slowly). */
    static final class MovableClock extends java.time.Clock {
        private volatile java.time.Duration offset = java.time.Duration.ZERO;

        void advance(java.time.Duration by) {
            offset = offset.plus(by);
        }

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public java.time.Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public java.time.Instant instant() {
            return java.time.Instant.now().plus(offset);
        }
    }

    @org.springframework.boot.test.context.TestConfiguration
    static class Clocks {
        @org.springframework.context.annotation.Bean
        MovableClock tickClock() {
            return new MovableClock();
        }
    }

    @org.springframework.beans.factory.annotation.Autowired
    MovableClock clock;

    @org.springframework.beans.factory.annotation.Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    @Test
    void redeliverRepublishesStalledRowsInArrivalOrderResetsStuckOnesAndRecordsTheRun() throws Exception {
        String run = uniqueSubject("ALONE-REDEL");
        long lost = stored(run + "-lost");
        long retry = stored(run + "-retry");
        long stuck = stored(run + "-stuck");
        long stuckLast = stored(run + "-stuck-last");
        long successor = stored(run + "-stuck-last"); // waits behind stuckLast; not old enough to count as lost
        jdbc.update("UPDATE inbox_message SET created_at = now() - INTERVAL '1 hour' WHERE id = ?", lost);
        jdbc.update("UPDATE inbox_message SET status = 'FAILED', attempts = 1, last_attempt_at = now() - INTERVAL '1 hour' WHERE id = ?", retry);
        jdbc.update("UPDATE inbox_message SET status = 'PROCESSING', attempts = 1, updated_at = now() - INTERVAL '1 hour' WHERE id = ?", stuck);
        jdbc.update("UPDATE inbox_message SET status = 'PROCESSING', attempts = 5, updated_at = now() - INTERVAL '1 hour' WHERE id = ?", stuckLast);
        NotifyBuilder tick = new NotifyBuilder(camel).fromRoute("inbox-redeliver").whenDone(1).create();
        double deadBefore = meters.counter("adapter.inbox.outcomes", "outcome", "dead").count();
        long runsBefore = lastRun();

        template.sendBody("direct:redeliver-tick", null);

        assertThat(tick.matches(30, TimeUnit.SECONDS)).isTrue();
        // counted as a row going DEAD, as a worker's last failed attempt is (the DEAD alert counts these)
        assertThat(meters.counter("adapter.inbox.outcomes", "outcome", "dead").count()).isEqualTo(deadBefore + 1);
        List<String> republished = mock("mock:kafka").getReceivedExchanges().stream()
                .map(e -> e.getMessage().getBody(String.class)).filter(b -> b.contains(run)).toList();
        assertThat(republished).hasSize(4);
        assertThat(republished.get(0)).contains("\"inboxId\":\"" + lost + "\"");
        assertThat(republished.get(1)).contains("\"inboxId\":\"" + retry + "\"");
        assertThat(republished.get(2)).contains("\"inboxId\":\"" + stuck + "\"");
        // stuckLast went DEAD: the row waiting behind it is released at once
        assertThat(republished.get(3)).contains("\"inboxId\":\"" + successor + "\"");
        assertThat(rows.status(Long.toString(stuck))).isEqualTo("RECEIVED");
        assertThat(rows.status(Long.toString(stuckLast))).isEqualTo("DEAD");
        assertThat(rows.row(Long.toString(stuckLast))).containsEntry("reply_status", "SENT"); // the same tick sent its reply
        // this tick's run, recorded once, with what it did (other stale rows of the shared database may add to it)
        assertThat(jdbc.queryForList("SELECT lost_events, retries, stuck_reset FROM redelivery_run WHERE id > ?"
                + " AND scheduler = 'routes-alone-tests'", runsBefore))
                .singleElement().satisfies(r -> {
                    assertThat(((Number) r.get("lost_events")).intValue()).isPositive();
                    assertThat(((Number) r.get("retries")).intValue()).isPositive();
                    assertThat(((Number) r.get("stuck_reset")).intValue()).isGreaterThanOrEqualTo(2);
                });
    }

    /** The id of the latest recorded run, 0 when none. */
    private long lastRun() {
        return jdbc.queryForObject("SELECT COALESCE(max(id), 0) FROM redelivery_run", Long.class);
    }

    /**
     * A tick whose count fold the server cancels (a row lock held elsewhere past the statement bound) says which
     * statement failed, and the chart's fold and the recovery (republishes, replies) still run: each fold is a route
     * of its own that contains its failure. Before, the count fold was a step of the tick, and one that failed on
     * every tick (as it did in the big-table benchmark) stopped all recovery.
     */
    @Test
    void aCountFoldThatFailsIsNamedAndHoldsUpNeitherTheChartNorTheRecovery() throws Exception {
        jdbc.update("UPDATE inbox_history_folded SET folded_until = date_trunc('minute', now()) - INTERVAL '10 minutes'");
        java.time.OffsetDateTime before = jdbc.queryForObject("SELECT folded_until FROM inbox_history_folded", java.time.OffsetDateTime.class);
        Recovery recovery = recoveryDue("ALONE-COUNTFAIL");
        List<String> log = tickHolding("SELECT * FROM inbox_status_total FOR UPDATE", "inbox-redeliver-counts");

        assertThat(log).anySatisfy(line -> assertThat(line).contains("inbox-redeliver-counts: sql/fold-status-counts.sql failed")
                .containsPattern("PSQLException\\[SQLState (57014|55P03)\\]"));
        assertThat(jdbc.queryForObject("SELECT folded_until FROM inbox_history_folded", java.time.OffsetDateTime.class)).isAfter(before);
        assertRecovered(recovery);
    }

    /** The other way round: a chart fold that fails leaves the count fold and the recovery of the same tick done. */
    @Test
    void aChartFoldThatFailsHoldsUpNeitherTheCountsNorTheRecovery() throws Exception {
        long delta = jdbc.queryForObject("INSERT INTO inbox_status_delta (status, delta) VALUES ('COMPLETED', 0) RETURNING id", Long.class);
        jdbc.update("UPDATE inbox_history_folded SET folded_until = date_trunc('minute', now()) - INTERVAL '10 minutes'");
        Recovery recovery = recoveryDue("ALONE-CHARTFAIL");
        List<String> log = tickHolding("SELECT * FROM inbox_history_folded FOR UPDATE", "inbox-redeliver-chart");

        assertThat(log).anySatisfy(line -> assertThat(line).contains("inbox-redeliver-chart: a step of the chart's fold failed")
                .containsPattern("PSQLException\\[SQLState (57014|55P03)\\]"));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_status_delta WHERE id = ?", Long.class, delta)).isZero();
        assertRecovered(recovery);
    }

    /**
     * A backlog of deltas (a bulk update, a requeue) is folded 5,000 a statement, as many as a tick's 8 statements
     * take, also when the table's statistics say it is empty: what autovacuum records of a queue table it finds
     * folded. With those statistics the former "id IN (SELECT ... FOR UPDATE SKIP LOCKED)" was planned as a nested
     * loop that rescanned the subquery per delta, and was cancelled at 3.5 s on these 12,001 (10.9 s alone).
     */
    @Test
    void theCountFoldTakesABacklogInBatchesWhateverTheStatisticsSay() throws Exception {
        long first = jdbc.queryForObject("SELECT coalesce(max(id), 0) FROM inbox_status_delta", Long.class);
        jdbc.update("INSERT INTO inbox_status_delta (status, delta) SELECT 'COMPLETED', 0 FROM generate_series(1, 100)");
        template.sendBody("direct:inbox-redeliver-counts", null); // these and whatever was pending: the table's pages hold none
        jdbc.execute("ANALYZE inbox_status_delta");
        assertThat(jdbc.queryForMap("SELECT relpages, reltuples FROM pg_class WHERE relname = 'inbox_status_delta'"))
                .satisfies(stats -> assertThat(((Number) stats.get("relpages")).intValue()).isPositive())
                .satisfies(stats -> assertThat(((Number) stats.get("reltuples")).doubleValue()).isZero());
        jdbc.update("INSERT INTO inbox_status_delta (status, delta) SELECT 'COMPLETED', 0 FROM generate_series(1, 12001)");

        template.sendBody("direct:inbox-redeliver-counts", null);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_status_delta WHERE id > ?", Long.class, first)).isZero();

        jdbc.update("INSERT INTO inbox_status_delta (status, delta) SELECT 'COMPLETED', 0 FROM generate_series(1, 41000)");
        template.sendBody("direct:inbox-redeliver-counts", null);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_status_delta WHERE id > ?", Long.class, first))
                .isEqualTo(1000); // 8 x 5,000 this tick, the rest at the next
        template.sendBody("direct:inbox-redeliver-counts", null);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_status_delta WHERE id > ?", Long.class, first)).isZero();
    }

    /**
     * A tick that ends on a failed step (its run record waits on a table lock past the statement bound) is logged
     * with the step and counted as a handled failure of the route, the series the SurveyInboxJobFailing alert
     * reads ({@code camel_exchanges_failures_handled_total{routeId="inbox-redeliver"}}); a tick that runs through
     * is not.
     */
    @Test
    void aTickThatFailsIsCountedWhereTheJobAlertReadsIt() throws Exception {
        io.micrometer.core.instrument.Counter failures = meters.find("camel.exchanges.failures.handled")
                .tag("routeId", "inbox-redeliver").counter();
        assertThat(failures).as("the route policy's handled-failure counter of inbox-redeliver").isNotNull();
        double before = failures.count();
        NotifyBuilder fine = new NotifyBuilder(camel).fromRoute("inbox-redeliver").whenDone(1).create();
        template.sendBody("direct:redeliver-tick", null);
        assertThat(fine.matches(30, TimeUnit.SECONDS)).isTrue();
        assertThat(failures.count()).isEqualTo(before);

        // the jobs' error policy logs from its route configuration: read every logger
        List<String> log = tickHolding("LOCK TABLE redelivery_run IN ACCESS EXCLUSIVE MODE", org.slf4j.Logger.ROOT_LOGGER_NAME);

        assertThat(log).anySatisfy(line -> assertThat(line).contains("inbox-redeliver: step")
                .contains("record-redelivery-run.sql").containsPattern("PSQLException\\[SQLState (57014|55P03)\\]"));
        assertThat(failures.count()).isEqualTo(before + 1);
    }

    /** A row whose event was lost and a DEAD row owing its reply: what one tick's recovery must do. */
    private Recovery recoveryDue(String prefix) {
        String run = uniqueSubject(prefix);
        long lost = stored(run + "-lost");
        jdbc.update("UPDATE inbox_message SET created_at = now() - INTERVAL '1 hour' WHERE id = ?", lost);
        long owed = stored(run + "-reply");
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', reply_status = 'PENDING', reply_reason_code = 'DEAD', "
                + "reply_reason = 'x', reply_updated_at = now() - INTERVAL '1 hour' WHERE id = ?", owed);
        return new Recovery(lost, owed);
    }

    private record Recovery(long lost, long owed) {
    }

    /** The lost row's event was republished and the owed reply sent. */
    private void assertRecovered(Recovery recovery) {
        assertThat(mock("mock:kafka").getReceivedExchanges()).extracting(e -> e.getMessage().getBody(String.class))
                .anySatisfy(body -> assertThat(body).contains("\"inboxId\":\"" + recovery.lost() + "\""));
        assertThat(rows.row(Long.toString(recovery.owed()))).containsEntry("reply_status", "SENT");
    }

    /** One tick while another transaction holds {@code lock}; what {@code route}'s logger wrote meanwhile. */
    private List<String> tickHolding(String lock, String route) throws Exception {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(route);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> events = new ch.qos.logback.core.read.ListAppender<>();
        events.start();
        logger.addAppender(events);
        try (java.sql.Connection holder = jdbc.getDataSource().getConnection()) {
            holder.setAutoCommit(false);
            holder.createStatement().execute(lock);
            // a delta to fold: the count fold's UPDATE of the totals waits for a lock on them
            jdbc.update("INSERT INTO inbox_status_delta (status, delta) VALUES ('COMPLETED', 0)");
            NotifyBuilder tick = new NotifyBuilder(camel).fromRoute("inbox-redeliver").whenDone(1).create();
            template.sendBody("direct:redeliver-tick", null);
            assertThat(tick.matches(30, TimeUnit.SECONDS)).isTrue();
            holder.rollback();
        } finally {
            logger.detachAppender(events);
        }
        return events.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void redeliverDuringAKafkaOutageSendsTheRepliesAndStopsPublishingAtTheFirstFailure() throws Exception {
        String run = uniqueSubject("ALONE-KDOWN");
        for (int i = 0; i < 3; i++) {
            long lost = stored(run + "-lost-" + i);
            jdbc.update("UPDATE inbox_message SET created_at = now() - INTERVAL '1 hour' WHERE id = ?", lost);
        }
        long owed = stored(run + "-reply");
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', reply_status = 'PENDING', reply_reason_code = 'DEAD', "
                + "reply_reason = 'x', reply_updated_at = now() - INTERVAL '1 hour' WHERE id = ?", owed);
        mock("mock:kafka").whenAnyExchangeReceived(e -> {
            throw new org.apache.kafka.common.errors.TimeoutException("broker unavailable"); // what a delivery timeout looks like
        });
        NotifyBuilder tick = new NotifyBuilder(camel).fromRoute("inbox-redeliver").whenDone(1).create();
        double counted = meters.counter("adapter.redelivery.republished", "kind", "lost-event").count();
        long runsBefore = lastRun();

        template.sendBody("direct:redeliver-tick", null);

        assertThat(tick.matches(30, TimeUnit.SECONDS)).isTrue();
        // one publish tried and failed: the rest of the tick's events wait for a later tick instead of each
        // waiting out a delivery timeout; the owed reply, which needs no Kafka, went out all the same
        assertThat(mock("mock:kafka").getReceivedCounter()).isOne();
        // and nothing is counted or recorded as republished (once counted when selected, an outage showed hundreds a minute)
        assertThat(meters.counter("adapter.redelivery.republished", "kind", "lost-event").count()).isEqualTo(counted);
        assertThat(jdbc.queryForList("SELECT lost_events FROM redelivery_run WHERE id > ?"
                + " AND scheduler = 'routes-alone-tests'", Integer.class, runsBefore))
                .as("this tick's run, recorded with no event republished").containsExactly(0);
        assertThat(rows.row(Long.toString(owed))).containsEntry("reply_status", "SENT");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status = 'RECEIVED'",
                Long.class, run + "-lost-%")).isEqualTo(3);

        // the broker back: the next tick takes the rows the closed budget left again at once (they kept the tick's
        // stamp and waited lost-event-after more, the subjects' newer rows held behind them); a row whose own publish
        // failed keeps it (taken again at once, one partition down would stop every tick at that row). The failed
        // publish may be another test's row, so two or three of these were left.
        List<String> left = jdbc.queryForList("SELECT srvy_drawup_no FROM inbox_message WHERE srvy_drawup_no LIKE ? "
                + "AND published_at IS NULL", String.class, run + "-lost-%");
        assertThat(left).hasSizeGreaterThanOrEqualTo(2);
        java.util.regex.Matcher failed = java.util.regex.Pattern.compile("\"inboxId\":\"(\\d+)\"")
                .matcher(mock("mock:kafka").getReceivedExchanges().get(0).getMessage().getBody(String.class));
        assertThat(failed.find()).isTrue();
        assertThat(jdbc.queryForObject("SELECT published_at IS NOT NULL FROM inbox_message WHERE id = ?", Boolean.class,
                Long.parseLong(failed.group(1)))).as("the row whose own publish failed keeps its stamp").isTrue();
        MockEndpoint.resetMocks(camel);
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> e.getMessage().setHeader(org.apache.camel.Exchange.HTTP_RESPONSE_CODE, 200));
        NotifyBuilder next = new NotifyBuilder(camel).fromRoute("inbox-redeliver").whenDone(1).create();
        template.sendBody("direct:redeliver-tick", null);
        assertThat(next.matches(30, TimeUnit.SECONDS)).isTrue();
        assertThat(mock("mock:kafka").getReceivedExchanges().stream().map(e -> e.getMessage().getBody(String.class))
                .filter(b -> b.contains(run + "-lost-"))).hasSameSizeAs(left);
    }

    /**
     * A reply the legacy system keeps refusing is tried after retry-delay, then twice as long after each further
     * failure, up to reply-max-retry-delay, and never given up: before, every tick retried it, forever.
     */
    @Test
    void aReplyThatKeepsFailingIsTriedLessOftenButNeverGivenUp() {
        String run = uniqueSubject("REPLYBACKOFF");
        // (failed tries of this reply, minutes since its last try) -> due at retry-delay 1 min, at most 60 min apart?
        // reply_attempts (every try of every reply the row owed, the senders' fence) is set high and plays no part
        long firstRetry = owedReply(run + "-a", 1, 2);       // waits 1 min: due
        long backedOff = owedReply(run + "-b", 4, 5);        // waits 8 min: not yet
        long backedOffDue = owedReply(run + "-c", 4, 9);     // waits 8 min: due
        long capped = owedReply(run + "-d", 200, 61);        // waits at most 60 min (2^199 would overflow): due
        long cappedNotYet = owedReply(run + "-e", 200, 59);  // not yet
        long pending = owedReply(run + "-f", 0, 2);          // a reply never tried since it was opened: due
        List<Long> mine = List.of(firstRetry, backedOff, backedOffDue, capped, cappedNotYet, pending);
        try {
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> due = template.requestBody("sql:classpath:sql/find-owed-replies.sql?parametersCount=7",
                    Map.of("retryDelayMillis", 60_000L, "replyMaxRetryDelayMillis", 3_600_000L, "batch", 1_000_000), List.class);

            assertThat(due).extracting(r -> ((Number) r.get("id")).longValue())
                    .contains(firstRetry, backedOffDue, capped, pending)
                    .doesNotContain(backedOff, cappedNotYet);
        } finally {
            // delivered, as far as the other tests' ticks are concerned
            mine.forEach(id -> jdbc.update("UPDATE inbox_message SET reply_status = 'SENT' WHERE id = ?", id));
        }
    }

    /**
     * Years of replies the legacy system refuses (never given up) each last tried longer ago than a reply opened a
     * minute ago: a batch takes the never-tried ones first, else a batch full of refused ones holds every new DEAD
     * reply back. Oldest first, the ten-year-old refused reply came before the pending one.
     */
    @Test
    void aBatchTakesTheRepliesNeverTriedBeforeTheRefusedOnes() {
        String run = uniqueSubject("REPLYPENDINGFIRST");
        long refused = owedReply(run + "-a", 1, 10 * 365 * 24 * 60);
        long pending = owedReply(run + "-b", 0, 2);
        try {
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> due = template.requestBody("sql:classpath:sql/find-owed-replies.sql?parametersCount=7",
                    Map.of("retryDelayMillis", 60_000L, "replyMaxRetryDelayMillis", 3_600_000L, "batch", 1), List.class);

            assertThat(due).hasSize(1);
            long first = ((Number) due.get(0).get("id")).longValue();
            assertThat(first).as("the refused reply waits behind a never-tried one").isNotEqualTo(refused);
            assertThat(jdbc.queryForObject("SELECT reply_status FROM inbox_message WHERE id = ?", String.class, first))
                    .isEqualTo("PENDING");
        } finally {
            List.of(refused, pending).forEach(id -> jdbc.update("UPDATE inbox_message SET reply_status = 'SENT' WHERE id = ?", id));
        }
    }

    /**
     * The other way round: a legacy system that takes fewer replies than the inbox owes it leaves more than a batch
     * of never-tried replies due every tick. PENDING first, the refused ones were never retried while that lasted;
     * the two statuses now take turns, so a refused reply gets its try in the same batch.
     */
    @Test
    void aBatchFullOfNeverTriedRepliesStillRetriesARefusedOne() {
        String run = uniqueSubject("REPLYTURNS");
        // refused twenty years ago: older than any other test's refused reply, so first in its status's turn
        long refused = owedReply(run + "-r", 1, 20 * 365 * 24 * 60);
        List<Long> mine = new ArrayList<>(List.of(refused));
        for (int i = 0; i < 5; i++) {
            mine.add(owedReply(run + "-p" + i, 0, 2));
        }
        try {
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> due = template.requestBody("sql:classpath:sql/find-owed-replies.sql?parametersCount=7",
                    Map.of("retryDelayMillis", 60_000L, "replyMaxRetryDelayMillis", 3_600_000L, "batch", 4), List.class);

            assertThat(due).hasSize(4).extracting(r -> ((Number) r.get("id")).longValue()).contains(refused);
        } finally {
            mine.forEach(id -> jdbc.update("UPDATE inbox_message SET reply_status = 'SENT' WHERE id = ?", id));
        }
    }

    private long owedReply(String subject, int failures, int minutesSinceLastTry) {
        long id = stored(subject);
        jdbc.update("UPDATE inbox_message SET status = 'DEAD', reply_status = ?, reply_reason_code = 'DEAD', reply_reason = 'x', "
                + "reply_attempts = 500, reply_failures = ?, reply_updated_at = now() - make_interval(mins => ?) WHERE id = ?",
                failures == 0 ? "PENDING" : "FAILED", failures, minutesSinceLastTry, id);
        return id;
    }

    @Test
    void aStuckRowResetReleasesAnOlderRowRequeuedWhileItWasRegistering() throws Exception {
        String run = uniqueSubject("ALONE-STUCKREQ");
        long[] ids = stored(run, 3);
        long older = ids[0];
        long stuck = ids[1];
        long behind = ids[2];
        // the older row was requeued while the later one was PROCESSING, and was held behind it; that worker died
        // ... and is old enough to count as a lost event too: the tick must still publish it once
        jdbc.update("UPDATE inbox_message SET held_reason = 'waiting behind inbox ' || ?, created_at = now() - INTERVAL '1 hour', "
                + "published_at = now() - INTERVAL '1 hour' WHERE id = ?", stuck, older);
        jdbc.update("UPDATE inbox_message SET status = 'PROCESSING', attempts = 1, updated_at = now() - INTERVAL '1 hour' WHERE id = ?", stuck);
        NotifyBuilder tick = new NotifyBuilder(camel).fromRoute("inbox-redeliver").whenDone(1).create();

        template.sendBody("direct:redeliver-tick", null);

        assertThat(tick.matches(30, TimeUnit.SECONDS)).isTrue();
        List<String> republished = mock("mock:kafka").getReceivedExchanges().stream()
                .map(e -> e.getMessage().getBody(String.class)).filter(b -> b.contains(run)).toList();
        // the older row (once), then the reset row; not the row behind both
        assertThat(republished).hasSize(2);
        assertThat(republished.get(0)).contains("\"inboxId\":\"" + older + "\"");
        assertThat(republished.get(1)).contains("\"inboxId\":\"" + stuck + "\"");
        assertThat(republished).noneMatch(b -> b.contains("\"inboxId\":\"" + behind + "\""));
    }

    @Test
    void aStuckRowResetReleasesADueRetryRefusedBehindItWhoseHoldWasNeverWritten() {
        // the older row's due retry was refused behind the later PROCESSING row (its event just published), and
        // that worker died before the refusal's hold was written: the reset releases it (as find-successor does)
        String run = uniqueSubject("ALONE-STUCKDUE");
        long[] ids = stored(run, 2);
        long older = ids[0];
        long stuck = ids[1];
        jdbc.update("UPDATE inbox_message SET status = 'FAILED', attempts = 1, last_attempt_at = now() - INTERVAL '1 hour', "
                + "published_at = now() WHERE id = ?", older);
        jdbc.update("UPDATE inbox_message SET status = 'PROCESSING', attempts = 1, updated_at = now() - INTERVAL '1 hour' WHERE id = ?", stuck);

        List<?> reset = template.requestBody("sql:classpath:sql/reset-stuck-rows.sql?parametersCount=10", java.util.Map.of(
                "batch", 200, "maxAttempts", 5, "retryDelayMillis", 60_000, "stuckAfterMillis", 60_000), List.class);

        assertThat(reset).map(r -> (java.util.Map<?, ?>) r).filteredOn(r -> run.equals(r.get("srvyDrawupNo")))
                .extracting(r -> r.get("inboxId"), r -> r.get("status"))
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(stuck, "RECEIVED"),
                        org.assertj.core.groups.Tuple.tuple(older, "SUCCESSOR"));
    }

    @Test
    void aSlowLegacySystemHoldsTheTicksRepliesToTheDeadlineNotTheRecovery() throws Exception {
        String run = uniqueSubject("ALONE-SLOWREPLY");
        List<Long> owed = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            long id = stored(run + "-" + i);
            // the oldest owed replies of the whole table, so this tick takes them first
            jdbc.update("UPDATE inbox_message SET status = 'DEAD', reply_status = 'PENDING', reply_reason_code = 'DEAD', "
                    + "reply_reason = 'x', reply_updated_at = TIMESTAMPTZ '2000-01-01' + make_interval(secs => ?) WHERE id = ?", i, id);
            owed.add(id);
        }
        long lost = stored(run + "-lost");
        jdbc.update("UPDATE inbox_message SET created_at = now() - INTERVAL '1 hour' WHERE id = ?", lost);
        // each reply takes 10 s; the replies have the first 15 s of the tick's 30 s (redeliver-publish-deadline)
        mock("mock:legacy-reply").whenAnyExchangeReceived(e -> {
            clock.advance(java.time.Duration.ofSeconds(10));
            e.getMessage().setHeader(org.apache.camel.Exchange.HTTP_RESPONSE_CODE, 200);
        });
        double deferredBefore = meters.counter("adapter.redelivery.replies.deferred").count();
        NotifyBuilder tick = new NotifyBuilder(camel).fromRoute("inbox-redeliver").whenDone(1).create();

        try {
            template.sendBody("direct:redeliver-tick", null);

            assertThat(tick.matches(30, TimeUnit.SECONDS)).isTrue();
            assertThat(owed.stream().map(id -> rows.row(Long.toString(id)).get("reply_status")).toList())
                    .as("two replies fit the deadline; the rest wait for a later tick")
                    .containsExactly("SENT", "SENT", "PENDING", "PENDING");
            assertThat(meters.counter("adapter.redelivery.replies.deferred").count() - deferredBefore).isGreaterThanOrEqualTo(2);
            // the recovery still ran: the lost row's event was republished in the same tick
            assertThat(mock("mock:kafka").getReceivedExchanges()).extracting(e -> e.getMessage().getBody(String.class))
                    .anySatisfy(body -> assertThat(body).contains("\"inboxId\":\"" + lost + "\""));
        } finally {
            // delivered, as far as the other tests' ticks are concerned
            owed.forEach(id -> jdbc.update("UPDATE inbox_message SET reply_status = 'SENT' WHERE id = ?", id));
        }
    }

    @Test
    void aLostReplySenderLeavesTheReplysBackoffAsItWas() {
        String run = uniqueSubject("ALONE-LOSTSENDER");
        long id = owedReply(run, 6, 0);
        // its sender took it an hour ago and vanished: SENDING, untouched since
        jdbc.update("UPDATE inbox_message SET reply_status = 'SENDING', reply_updated_at = now() - INTERVAL '1 hour' WHERE id = ?", id);
        try {
            template.requestBody("sql:classpath:sql/reset-stuck-replies.sql?parametersCount=2",
                    Map.of("stuckAfterMillis", 15 * 60_000L), Object.class);

            assertThat(rows.row(Long.toString(id))).containsEntry("reply_status", "FAILED").containsEntry("reply_failures", 6);
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> due = template.requestBody("sql:classpath:sql/find-owed-replies.sql?parametersCount=7",
                    Map.of("retryDelayMillis", 60_000L, "replyMaxRetryDelayMillis", 3_600_000L, "batch", 1_000_000), List.class);
            assertThat(due).as("six failed tries wait 32 min, more than the 15 min the reset set its clock back")
                    .extracting(r -> ((Number) r.get("id")).longValue()).doesNotContain(id);
        } finally {
            jdbc.update("UPDATE inbox_message SET reply_status = 'SENT' WHERE id = ?", id);
        }
    }
}
