package com.hospital.surveyinbox.redelivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.config.JobRegistrationLock;
import com.hospital.surveyinbox.support.IntegrationTest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * Instances start their Camel routes one at a time (found by the production-shape harness: three pods
 * starting at once on a new database raced to store the clustered Quartz job, and one died with a duplicate
 * key): a second start waits on the first one's advisory lock — seen in pg_locks, not by timing — and goes on
 * as soon as the first one's routes run.
 */
class JobRegistrationLockTest extends IntegrationTest {

    /** This lock in pg_locks: a bigint key shows as classid (high half) and objid (low half), objsubid 1. */
    static final String OUR_LOCK = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1"
            + " AND classid = 6924 AND objid = 2";

    @Autowired
    CamelContext camel;

    @Autowired
    DataSource dataSource;

    @Test
    void aSecondStartWaitsUntilTheFirstOnesRoutesRun() throws Exception {
        assertThat(camel.getLifecycleStrategies()).as("registered with Camel").anyMatch(s -> s instanceof JobRegistrationLock);
        JobRegistrationLock first = new JobRegistrationLock(dataSource);
        JobRegistrationLock second = new JobRegistrationLock(dataSource);

        first.onContextStarting(camel);
        CompletableFuture<Void> secondStart = CompletableFuture.runAsync(() -> second.onContextStarting(camel));
        try {
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> jdbc.queryForObject(
                    OUR_LOCK + " AND NOT granted", Long.class) > 0);
            assertThat(secondStart).as("the second start waits").isNotDone();

            first.onContextStarted(camel);
            secondStart.get(10, java.util.concurrent.TimeUnit.SECONDS);
        } finally {
            first.onContextStarted(camel);
            secondStart.get(10, java.util.concurrent.TimeUnit.SECONDS);
            second.onContextStarted(camel);
        }
        assertThat(jdbc.queryForObject(OUR_LOCK, Long.class))
                .as("both released").isZero();
    }

    /**
     * A holder slower than the pool's timeouts (socketTimeout 4 s, the server's statement bound 3.5 s): the start
     * still waits for it, up to its minute, instead of going ahead without the lock after 4 s.
     */
    @Test
    void aStartWaitsLongerThanThePoolsTimeoutsForASlowHolder() throws Exception {
        JobRegistrationLock starting = new JobRegistrationLock(dataSource);
        CompletableFuture<Void> start;
        try (java.sql.Connection holder = java.sql.DriverManager.getConnection(services().jdbcUrl(),
                com.hospital.surveyinbox.support.EmbeddedServices.DB_USER, "");
             java.sql.Statement hold = holder.createStatement()) {
            hold.execute("SELECT pg_advisory_lock(" + 0x1B0C_0000_0002L + ")");
            start = CompletableFuture.runAsync(() -> starting.onContextStarting(camel));
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> jdbc.queryForObject(
                    OUR_LOCK + " AND NOT granted", Long.class) > 0);
            // still waiting, without a break, for longer than either timeout
            await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(7)).pollInterval(Duration.ofMillis(100))
                    .until(() -> !start.isDone() && jdbc.queryForObject(OUR_LOCK + " AND NOT granted", Long.class) > 0);
            hold.execute("SELECT pg_advisory_unlock(" + 0x1B0C_0000_0002L + ")");
        }
        try {
            start.get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(jdbc.queryForObject(OUR_LOCK + " AND granted", Long.class)).as("taken once the holder let go").isOne();
        } finally {
            starting.onContextStarted(camel);
        }
        assertThat(jdbc.queryForObject(OUR_LOCK, Long.class)).as("released").isZero();
    }
}
