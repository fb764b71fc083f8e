package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The connection budget as a test: the main pool exactly as large as the workers, and all 16 workers stuck in
 * slow SQL (every claim of these rows takes 2.5 s, under the main pool's statement bound), holding every connection of it. Receptions still commit
 * within the store timeout, on the connections reserved for them ({@code adapter.reception.pool-size}); without
 * that reserve they waited for the main pool and answered 503 for a database that would have taken the row.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=budget-tests",
        "adapter.kafka.group-id=budget-tests",
        "spring.quartz.scheduler-name=budget-tests",
        "adapter.kafka.workers=16",
        "spring.datasource.hikari.maximum-pool-size=16",
        "adapter.http.response-timeout=PT5S"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class ConnectionBudgetTest extends IntegrationTest {

    /**
     * Sessions sleeping in the trigger: only its pg_sleep waits so (the statement's text is not matched: the
     * server keeps only its first track_activity_query_size bytes, the claim's leading comment).
     */
    private static final String SLEEPING_CLAIMS =
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND backend_type = 'client backend'";

    @Test
    void receptionsCommitWhileEveryWorkerSitsInSlowSql() {
        // the test watches on a connection of its own: the service's main pool is what gets exhausted
        org.springframework.jdbc.core.JdbcTemplate observer = new org.springframework.jdbc.core.JdbcTemplate(
                new org.springframework.jdbc.datasource.DriverManagerDataSource(services().jdbcUrl(),
                        com.hospital.surveyinbox.support.EmbeddedServices.DB_USER, ""));
        String stuck = uniqueSubject("BUDGET");
        jdbc.execute("CREATE OR REPLACE FUNCTION slow_budget_claim() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " IF NEW.srvy_drawup_no LIKE '" + stuck + "-%' AND NEW.status = 'PROCESSING' THEN PERFORM pg_sleep(2.5); END IF;"
                + " RETURN NEW; END $$");
        jdbc.execute("CREATE TRIGGER slow_budget_claim BEFORE UPDATE ON inbox_message FOR EACH ROW EXECUTE FUNCTION slow_budget_claim()");
        try {
            for (int i = 0; i < 40; i++) {
                client.accept(ServiceClient.message(stuck + "-" + i, ""));
            }
            // every worker sits in a claim that sleeps: the main pool is empty
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> observer.queryForObject(
                    SLEEPING_CLAIMS,
                    Long.class) >= 16);

            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                statuses.add(client.receive(ServiceClient.message(uniqueSubject("BUDGET-OTHER"), "")).status());
            }
            long stillStuck = observer.queryForObject(
                    SLEEPING_CLAIMS, Long.class);

            assertThat(statuses).containsOnly(200);
            assertThat(stillStuck).as("the workers were still stuck while the receptions committed").isPositive();
        } finally {
            observer.execute("DROP TRIGGER IF EXISTS slow_budget_claim ON inbox_message");
        }
        await().atMost(Duration.ofSeconds(90)).until(() -> rows.count(stuck, "COMPLETED") == 40);
    }
}
