package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * When the consumers' watch takes a pod's consumers out of the group for its database and back (each is a rebalance
 * for every pod): only after its workers' statements failed for three periods with none answered, back once a probe
 * answers at two looks in a row, staying away longer each time it has to leave again soon after coming back. The
 * watch against a pod really cut off from PostgreSQL: FaultToleranceTest.
 */
class ConsumerDatabaseWatchTest {

    private static final String ROUTE = "inbox-process";

    private final AtomicLong now = new AtomicLong();
    private final AtomicBoolean answers = new AtomicBoolean();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private DefaultCamelContext camel;
    private ConsumerDatabaseWatch watch;

    @BeforeEach
    void start() throws Exception {
        camel = new DefaultCamelContext();
        camel.addRoutes(new RouteBuilder() {
            @Override
            public void configure() {
                from("direct:consumer").routeId(ROUTE).log("record");
            }
        });
        camel.start();
        watch = new ConsumerDatabaseWatch(camel, answers::get, Duration.ofSeconds(10), meters, now::get);
    }

    @AfterEach
    void stop() {
        camel.stop();
    }

    /** What a worker's statement meets with no connection to be had (the database unreachable from this pod). */
    private static final RuntimeException NO_CONNECTION = new org.springframework.jdbc.CannotGetJdbcConnectionException(
            "Failed to obtain JDBC Connection", new java.sql.SQLTransientConnectionException("Connection is not available"));

    private void failed() {
        watch.failed(NO_CONNECTION);
    }

    private void at(long seconds) {
        now.set(Duration.ofSeconds(seconds).toNanos());
    }

    /** As the watch route does: the stop, then the bean's record of it. */
    private void leave() throws Exception {
        camel.getRouteController().stopRoute(ROUTE);
        watch.left(ROUTE);
    }

    private void rejoin() throws Exception {
        camel.getRouteController().startRoute(ROUTE);
        watch.rejoined(ROUTE);
    }

    @Test
    void leavesOnlyAfterThreePeriodsOfFailuresWithNoneAnsweredAndTheProbeFailing() throws Exception {
        at(0);
        failed();
        at(10);
        failed();
        failed();
        assertThat(watch.leaveDue(ROUTE)).as("three failures, but within two periods").isFalse();
        at(25);
        watch.answered(); // a claim got through: this pod reaches the database after all
        failed();
        at(40);
        failed();
        assertThat(watch.leaveDue(ROUTE)).as("two failures since the last answer").isFalse();
        failed();
        at(50);
        failed();
        at(54);
        assertThat(watch.leaveDue(ROUTE)).as("four failures, the first 29 s ago").isFalse();
        at(55);
        answers.set(true);
        assertThat(watch.leaveDue(ROUTE)).as("the probe answers: the database is reachable from here").isFalse();
        answers.set(false);
        assertThat(watch.leaveDue(ROUTE)).isTrue();
        leave();
        assertThat(meters.get("adapter.kafka.consumer.away").gauge().value()).isEqualTo(1);
        assertThat(meters.get("adapter.kafka.consumer.database.leaves").counter().count()).isEqualTo(1);
        assertThat(watch.leaveDue(ROUTE)).as("already away").isFalse();
    }

    @Test
    void comesBackAfterTwoAnsweringLooksAndStaysAwayLongerWhenItHasToLeaveAgainSoon() throws Exception {
        goAway(0);
        // away from 30 s: the probe fails, then answers once, fails, then twice in a row
        answers.set(false);
        at(40);
        assertThat(watch.rejoinDue()).isFalse();
        answers.set(true);
        at(50);
        assertThat(watch.rejoinDue()).as("one answering look").isFalse();
        answers.set(false);
        at(60);
        assertThat(watch.rejoinDue()).isFalse();
        answers.set(true);
        at(70);
        assertThat(watch.rejoinDue()).isFalse();
        at(80);
        assertThat(watch.rejoinDue()).as("two answering looks in a row, away for a period at least").isTrue();
        rejoin();
        assertThat(meters.get("adapter.kafka.consumer.away").gauge().value()).isZero();

        // the statements fail again at once (a database that answers a probe, not the workers): away at least 20 s,
        // then 40 s: a pod flapping between them does not rebalance the group at every look
        assertThat(awayFor(90)).isEqualTo(20);
        assertThat(awayFor(200)).isEqualTo(40);
        // back for more than ten minutes before leaving again: one period
        assertThat(awayFor(1000)).isEqualTo(20); // two answering looks take 20 s, more than the one period asked
    }

    /** Fails from {@code from} s, every period, until the watch leaves (three periods), the probe failing. */
    private void goAway(long from) throws Exception {
        answers.set(false);
        for (long s = from; s <= from + 30; s += 10) {
            at(s);
            failed();
        }
        assertThat(watch.leaveDue(ROUTE)).isTrue();
        leave();
    }

    @Test
    void aBurstOfFailuresLongAgoOrSlowStatementsAreNoReasonToLeave() throws Exception {
        at(0);
        failed();
        failed();
        failed();
        at(100);
        assertThat(watch.leaveDue(ROUTE)).as("no failure for 100 s (a failover at night, then no events)").isFalse();
        // a slow database: statement timeouts everywhere, shared by every pod; leaving would not cure them
        RuntimeException timeout = new org.springframework.dao.QueryTimeoutException("statement timeout",
                new java.sql.SQLException("canceling statement due to statement timeout", "57014"));
        watch.answered();
        for (long s = 200; s <= 260; s += 10) {
            at(s);
            watch.failed(timeout);
        }
        assertThat(watch.leaveDue(ROUTE)).isFalse();
    }

    /** Leaves from {@code from} s; returns the seconds away, the probe answering at every look. */
    private long awayFor(long from) throws Exception {
        goAway(from);
        answers.set(true);
        for (long s = from + 40; ; s += 10) {
            at(s);
            if (watch.rejoinDue()) {
                rejoin();
                return s - (from + 30);
            }
            assertThat(s).as("back within ten minutes").isLessThan(from + 630);
        }
    }

    @Test
    void noLeaveOrReturnWhileTheRouteIsNotTheWatchsToMove() throws Exception {
        for (long s = 0; s <= 30; s += 10) {
            at(s);
            failed();
        }
        camel.getRouteController().stopRoute(ROUTE); // stopped by someone else (an operator, a shutdown)
        assertThat(watch.leaveDue(ROUTE)).isFalse();
        answers.set(true);
        at(50);
        assertThat(watch.rejoinDue()).as("never left: nothing to bring back").isFalse();
    }

    /**
     * The probe (a SELECT 1 that waits up to the pool's wait and the socket timeout in a brown-out) runs without the
     * watch's lock: every worker's claim reports to the watch, and all of them stalled behind a probe held in it.
     * A statement that answered while the probe ran keeps the consumers in.
     */
    @Test
    void workersReportWhileTheProbeWaitsAndAnAnswerMeanwhileKeepsTheConsumersIn() throws Exception {
        java.util.concurrent.CountDownLatch probing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        ConsumerDatabaseWatch slow = new ConsumerDatabaseWatch(camel, () -> {
            probing.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return false; // the probe fails too
        }, Duration.ofSeconds(10), new SimpleMeterRegistry(), now::get);
        at(0);
        slow.failed(NO_CONNECTION);
        at(10);
        slow.failed(NO_CONNECTION);
        at(30);
        slow.failed(NO_CONNECTION);
        java.util.concurrent.ExecutorService looks = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<Boolean> due = looks.submit(() -> slow.leaveDue(ROUTE));
            assertThat(probing.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            // a worker's claim answers while the probe waits, not held up by it; three quick failures follow (a new
            // run of them, seconds long, not three periods)
            java.util.concurrent.CompletableFuture<Void> worker = java.util.concurrent.CompletableFuture.runAsync(() -> {
                slow.answered();
                at(31);
                for (int i = 0; i < 3; i++) {
                    slow.failed(NO_CONNECTION);
                }
            });
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(worker::isDone);
            assertThat(due.isDone()).as("the probe still waits").isFalse();
            release.countDown();
            assertThat(due.get(10, java.util.concurrent.TimeUnit.SECONDS)).as("a statement answered meanwhile").isFalse();
            assertThat(slow.leaveDue(ROUTE)).as("the new run of failures is a second long").isFalse();
        } finally {
            release.countDown();
            looks.shutdownNow();
        }
    }
}
