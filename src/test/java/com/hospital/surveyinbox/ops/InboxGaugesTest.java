package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The backlog gauges when the database stops answering their reads: the oldest row's age goes on growing (the
 * backlog alert reads it exactly when the database is what fails), and the staleness and failure count say so.
 */
class InboxGaugesTest extends IntegrationTest {

    @Autowired
    InboxRowRepository repository;

    @Autowired
    InboxStore store;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry serviceMeters;

    @Test
    void whileReadsFailTheOldestAgeKeepsGrowingAndTheGaugesSayHowStaleTheyAre() throws Exception {
        String subject = uniqueSubject("GAUGE");
        // stored without its event: stays RECEIVED (the shared context runs no redelivery job)
        long id = store.accept(new ReceivedMessage(subject, "SEND",
                ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8), null)).inboxId();
        jdbc.update("UPDATE inbox_message SET created_at = now() - interval '1 hour' WHERE id = ?", id);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        InboxGauges gauges = new InboxGauges(repository, meters, com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of()));
        try (Connection blocker = DriverManager.getConnection(EmbeddedServices.get().jdbcUrl(), EmbeddedServices.DB_USER, "")) {
            assertThat(gauge(meters, "adapter.inbox.oldest.pending.age")).isGreaterThanOrEqualTo(3600);
            assertThat(gauge(meters, "adapter.inbox.gauges.staleness")).isLessThan(InboxGauges.REFRESH_NANOS / 1e9);

            // the counts' table locked: the next read waits out the pool's lock timeout and fails
            blocker.setAutoCommit(false);
            try (Statement s = blocker.createStatement()) {
                s.execute("LOCK TABLE inbox_status_total IN ACCESS EXCLUSIVE MODE");
            }
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> gauge(meters, "adapter.inbox.oldest.pending.age") > 0
                            && meters.get("adapter.inbox.gauges.failures").counter().count() >= 1);
            double frozenAt = gauge(meters, "adapter.inbox.oldest.pending.age");
            // as a scrape does: reading the gauges is what reads the database again (every 5 s at most)
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> gauge(meters, "adapter.inbox.gauges.staleness") > 0
                            && meters.get("adapter.inbox.gauges.failures").counter().count() >= 2);
            assertThat(gauge(meters, "adapter.inbox.oldest.pending.age")).isGreaterThan(frozenAt);
            assertThat(gauge(meters, "adapter.inbox.gauges.staleness")).isGreaterThan(InboxGauges.REFRESH_NANOS / 1e9);

            blocker.rollback();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> gauge(meters, "adapter.inbox.gauges.staleness") < InboxGauges.REFRESH_NANOS / 1e9);
        } finally {
            gauges.destroy();
            jdbc.update("DELETE FROM inbox_message WHERE id = ?", id);
        }
    }

    /**
     * How long ago the clustered redelivery job recorded a tick (any pod's), on the database clock: the alert that
     * sees a job which stopped firing altogether (no failed tick would say it) reads it.
     */
    @Test
    void theRedeliveryJobsLastTickAgeIsReadFromItsRunRecords() {
        try {
            // a tick older than ten minutes, the latest: that is what the gauge says (a new instance reads at once)
            jdbc.update("DELETE FROM redelivery_run WHERE fired_at > now() - INTERVAL '11 minutes'");
            jdbc.update("INSERT INTO redelivery_run (scheduled_fire_time, fired_at, instance, scheduler, lost_events, retries, "
                    + "stuck_reset, replies) VALUES (now() - INTERVAL '11 minutes', now() - INTERVAL '11 minutes', 'gauge-test', "
                    + "'gauge-test', 0, 0, 0, 0)");
            assertANewReadingOfTheLastTickIsBetween(660, 720);
            // a new tick: a new reading falls back to it
            jdbc.update("INSERT INTO redelivery_run (scheduled_fire_time, instance, scheduler, lost_events, retries, "
                    + "stuck_reset, replies) VALUES (now(), 'gauge-test', 'gauge-test', 0, 0, 0, 0)");
            assertANewReadingOfTheLastTickIsBetween(0, 30);
        } finally {
            jdbc.update("DELETE FROM redelivery_run WHERE instance = 'gauge-test'");
        }
    }

    /**
     * How long the oldest closed row has outstayed its retention time with its payload: the alert that sees a
     * retention job which does not run (disabled trigger, nights skipped) reads it; no failed run would say it.
     */
    @Test
    void theRetentionOverdueGaugeSaysHowLongAPayloadOutstayedItsTime() {
        String subject = uniqueSubject("OVERDUE");
        long id = store.accept(new ReceivedMessage(subject, "SEND",
                ServiceClient.message(subject, "").getBytes(StandardCharsets.UTF_8), null)).inboxId();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        // read at each refresh here (once a minute in service)
        InboxGauges gauges = new InboxGauges(repository, meters, com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of()), 0,
                java.time.Clock.systemUTC());
        SimpleMeterRegistry off = new SimpleMeterRegistry();
        InboxGauges disabled = new InboxGauges(repository, off,
                com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of("adapter.retention.enabled", "false")));
        try {
            // completed 400 days ago, its payload kept: 370 days past the 30 days of adapter.retention.completed
            jdbc.update("UPDATE inbox_message SET status = 'COMPLETED', updated_at = now() - INTERVAL '400 days' WHERE id = ?", id);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                    assertThat(gauge(meters, "adapter.retention.overdue")).isBetween(370 * 86400.0 - 60, 370 * 86400.0 + 60));
            assertThat(gauge(off, "adapter.retention.overdue")).as("retention off: nothing is overdue").isEqualTo(-1);

            // redacted: no longer overdue (whatever younger rows other tests left)
            jdbc.update("UPDATE inbox_message SET payload = NULL, redacted_at = now() WHERE id = ?", id);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                    assertThat(gauge(meters, "adapter.retention.overdue")).isLessThan(300 * 86400.0));
        } finally {
            gauges.destroy();
            disabled.destroy();
            jdbc.update("DELETE FROM inbox_message WHERE id = ?", id);
        }
    }

    /**
     * The pod's clock against the database's: a pod whose clock runs 30 s ahead reads 30 s (to within half a read's
     * round trip), one 30 s behind -30 s, and the service's own gauge (this machine's one clock) about 0.
     */
    @Test
    void theClockGaugeReadsHowFarThePodsClockIsFromTheDatabases() {
        SimpleMeterRegistry ahead = new SimpleMeterRegistry();
        SimpleMeterRegistry behind = new SimpleMeterRegistry();
        InboxGauges aheadGauges = new InboxGauges(repository, ahead, com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of()),
                InboxGauges.OVERDUE_REFRESH_NANOS, java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofSeconds(30)));
        InboxGauges behindGauges = new InboxGauges(repository, behind, com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of()),
                InboxGauges.OVERDUE_REFRESH_NANOS, java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofSeconds(-30)));
        try {
            double slack = InboxGauges.SKEW_MAX_ROUND_TRIP_MILLIS / 2000.0;
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                    assertThat(gauge(ahead, "adapter.clock.skew")).isBetween(30 - slack, 30 + slack));
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                    assertThat(gauge(behind, "adapter.clock.skew")).isBetween(-30 - slack, -30 + slack));
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                    assertThat(serviceMeters.get("adapter.clock.skew").gauge().value()).isBetween(-slack, slack));
        } finally {
            aheadGauges.destroy();
            behindGauges.destroy();
        }
    }

    /** A new gauge instance (its first read at once, no cached value) reads the last tick's age within these seconds. */
    private void assertANewReadingOfTheLastTickIsBetween(double min, double max) {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        InboxGauges gauges = new InboxGauges(repository, meters, com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of()));
        try {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                    assertThat(gauge(meters, "adapter.redelivery.last.run.age")).isBetween(min, max));
        } finally {
            gauges.destroy();
        }
    }

    private static double gauge(SimpleMeterRegistry meters, String name) {
        return meters.get(name).gauge().value();
    }
}
