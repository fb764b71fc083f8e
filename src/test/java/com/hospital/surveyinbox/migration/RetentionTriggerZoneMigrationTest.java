package com.hospital.surveyinbox.migration;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.EmbeddedServices;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * V16 on a database whose cluster already stored the retention job's trigger in the JVM's zone (UTC): camel-quartz
 * reschedules a stored trigger only when its cron text changes, so the route's new {@code trigger.timeZone}
 * reaches such a database only because V16 removes the stored job and trigger (the next instance stores them again,
 * in the hospital's zone: RedeliveryTest). The redelivery job's are kept.
 */
class RetentionTriggerZoneMigrationTest {

    @Test
    void theRetentionTriggerStoredInUtcIsRemovedAndTheRedeliveryTriggerKept() throws Exception {
        EmbeddedServices services = EmbeddedServices.get();
        String database = "trigger_zone_" + System.nanoTime();
        String url = services.createDatabase(database);
        try {
            flyway(url).target("15").load().migrate();
            try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, ""); Statement s = c.createStatement()) {
                for (String job : List.of("retention", "redeliver")) {
                    s.execute("INSERT INTO qrtz_job_details (sched_name, job_name, job_group, job_class_name, is_durable,"
                            + " is_nonconcurrent, is_update_data, requests_recovery) VALUES ('survey-inbox-adapter', '" + job
                            + "', 'inbox', 'org.apache.camel.component.quartz.StatefulCamelJob', false, true, true, false)");
                    s.execute("INSERT INTO qrtz_triggers (sched_name, trigger_name, trigger_group, job_name, job_group,"
                            + " trigger_state, trigger_type, start_time) VALUES ('survey-inbox-adapter', '" + job + "', 'inbox', '"
                            + job + "', 'inbox', 'WAITING', 'CRON', 0)");
                    s.execute("INSERT INTO qrtz_cron_triggers (sched_name, trigger_name, trigger_group, cron_expression, time_zone_id)"
                            + " VALUES ('survey-inbox-adapter', '" + job + "', 'inbox', '0 30 3 * * ?', 'UTC')");
                }
            }

            flyway(url).load().migrate();

            try (Connection c = DriverManager.getConnection(url, EmbeddedServices.DB_USER, ""); Statement s = c.createStatement()) {
                for (String table : List.of("qrtz_cron_triggers", "qrtz_triggers")) {
                    assertThat(names(s, "SELECT trigger_name FROM " + table)).as(table).containsExactly("redeliver");
                }
                assertThat(names(s, "SELECT job_name FROM qrtz_job_details")).containsExactly("redeliver");
            }
        } finally {
            services.dropDatabase(database);
        }
    }

    /** Flyway as the service runs it (its lock held by a session of its own, so CREATE INDEX CONCURRENTLY can finish). */
    private static org.flywaydb.core.api.configuration.FluentConfiguration flyway(String url) {
        return com.hospital.surveyinbox.config.FlywayConnection.configure(Flyway.configure(), url, EmbeddedServices.DB_USER, "",
                java.time.Duration.ofSeconds(5), new java.util.Properties()).locations("classpath:db/migration");
    }

    private static List<String> names(Statement s, String query) throws Exception {
        List<String> names = new java.util.ArrayList<>();
        try (ResultSet rs = s.executeQuery(query)) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        }
        return names;
    }
}
