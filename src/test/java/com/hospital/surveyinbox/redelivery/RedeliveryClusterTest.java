package com.hospital.surveyinbox.redelivery;

import com.hospital.surveyinbox.support.SecondInstance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.EmbeddedServices;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/** Two service instances on one database form one Quartz cluster: every tick runs on exactly one of them. */
class RedeliveryClusterTest {

    private static ConfigurableApplicationContext instance() throws IOException {
        return instance("cluster-tests", true);
    }

    private static ConfigurableApplicationContext instance(String cluster, boolean redeliver) {
        return SecondInstance.start(Map.of(
                "adapter.kafka.topic", cluster,
                "adapter.kafka.group-id", cluster,
                "spring.quartz.scheduler-name", cluster,
                "adapter.inbox.redeliver-enabled", Boolean.toString(redeliver),
                "adapter.inbox.redeliver-cron", "0/1 * * * * ?"));
    }

    @Test
    void eachTickFiresOnExactlyOneOfTwoInstances() throws Exception {
        EmbeddedServices.get();
        JdbcTemplate jdbc = new JdbcTemplate(EmbeddedServices.get().dataSource());
        ConfigurableApplicationContext first = instance();
        ConfigurableApplicationContext second = null;
        try {
            second = instance();
            assertThat(first.getEnvironment().getProperty("local.server.port"))
                    .isNotEqualTo(second.getEnvironment().getProperty("local.server.port"));
            long start = count(jdbc);
            await().atMost(Duration.ofSeconds(60)).until(() -> count(jdbc) >= start + 8);

            List<Map<String, Object>> duplicates = jdbc.queryForList("""
                    SELECT scheduled_fire_time, count(*) AS runs
                      FROM redelivery_run
                     WHERE scheduler = 'cluster-tests'
                     GROUP BY scheduled_fire_time
                    HAVING count(*) > 1""");
            assertThat(duplicates).isEmpty();
            assertThat(jdbc.queryForObject("SELECT count(DISTINCT instance_name) FROM qrtz_scheduler_state WHERE sched_name = 'cluster-tests'",
                    Integer.class)).isEqualTo(2);
        } finally {
            closeInStartOrder(first, second);
        }
    }

    /**
     * Two instances of one Quartz cluster in one JVM share Quartz's JVM-wide connection registry, keyed by the
     * scheduler's name ({@code springNonTxDataSource.<name>}): the instance started last replaces the first's
     * entry, so the first instance's jobs run on the last one's pool. Closed last-first (try-with-resources), the
     * last instance's pool closed under a job of the first, whose worker then retried for ever and hung the
     * first's close (and the suite: seen on a clean clone). Closed in start order, each pool outlives every job
     * using it. Pods are separate JVMs: this is the test's arrangement, not the service's.
     */
    private static void closeInStartOrder(ConfigurableApplicationContext first, ConfigurableApplicationContext second) {
        try {
            first.close();
        } finally {
            if (second != null) {
                second.close();
            }
        }
    }

    @Test
    void anOptedOutInstanceTakesNoTriggerSoNoTickIsLost() throws Exception {
        JdbcTemplate jdbc = new JdbcTemplate(EmbeddedServices.get().dataSource());
        ConfigurableApplicationContext optedOut = instance("optout-tests", false);
        ConfigurableApplicationContext working = null;
        try {
            working = instance("optout-tests", true);
            assertThat(optedOut.getBean(org.quartz.Scheduler.class).isStarted()).isFalse();
            long start = count(jdbc, "optout-tests");
            await().atMost(Duration.ofSeconds(60)).until(() -> count(jdbc, "optout-tests") >= start + 8);

            // every fire time between the first and the last recorded one ran, on the working instance
            List<java.sql.Timestamp> fired = jdbc.queryForList("""
                    SELECT scheduled_fire_time
                      FROM redelivery_run
                     WHERE scheduler = 'optout-tests'
                     ORDER BY scheduled_fire_time""", java.sql.Timestamp.class);
            List<java.sql.Timestamp> recent = fired.subList(fired.size() - 8, fired.size());
            for (int i = 1; i < recent.size(); i++) {
                assertThat(recent.get(i).getTime() - recent.get(i - 1).getTime()).as("no tick skipped").isEqualTo(1000);
            }
            assertThat(jdbc.queryForObject("SELECT count(DISTINCT instance) FROM redelivery_run WHERE scheduler = 'optout-tests'",
                    Integer.class)).isEqualTo(1);
        } finally {
            closeInStartOrder(optedOut, working);
        }
    }

    private static long count(JdbcTemplate jdbc) {
        return count(jdbc, "cluster-tests");
    }

    private static long count(JdbcTemplate jdbc, String cluster) {
        return jdbc.queryForObject("SELECT count(*) FROM redelivery_run WHERE scheduler = ?", Long.class, cluster);
    }
}
