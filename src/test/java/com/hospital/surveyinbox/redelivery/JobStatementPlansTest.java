package com.hospital.surveyinbox.redelivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.inbox.SqlFiles;
import com.hospital.surveyinbox.support.EmbeddedServices;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The jobs' batch statements under the statistics autovacuum leaves on a table it found empty ({@code reltuples} 0
 * over a page or more): the planner then expects one row, and a batch written as {@code id IN (SELECT ... FOR
 * UPDATE SKIP LOCKED)} became a nested loop that rescanned the locking subquery once per row of the table (the
 * count fold: 10.9 s for 12,001 deltas). Each statement must take its batch once, whatever the statistics: every
 * LockRows node of its plan runs one loop. A database of its own, so its statistics can be set up so.
 */
class JobStatementPlansTest {

    static String database;
    static SingleConnectionDataSource connection;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void migrated() {
        database = "job_plans_" + System.nanoTime();
        String url = EmbeddedServices.get().migratedDatabase(database);
        connection = new SingleConnectionDataSource(url, EmbeddedServices.DB_USER, "", true);
        jdbc = new JdbcTemplate(connection);
    }

    @AfterAll
    static void drop() {
        connection.destroy();
        EmbeddedServices.get().dropDatabase(database);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "reset-stuck-rows       | status, attempts, updated_at           | 'PROCESSING', 1, now() - INTERVAL '1 hour'",
            "republish-lost-events  | status, created_at                     | 'RECEIVED', now() - INTERVAL '1 hour'",
            "republish-due-retries  | status, attempts, last_attempt_at      | 'FAILED', 1, now() - INTERVAL '1 hour'",
            "redact-closed-payloads | status, updated_at                     | 'COMPLETED', now() - INTERVAL '400 days'"})
    void takesItsBatchOnceWhateverTheStatisticsSay(String statement, String columns, String values) throws Exception {
        // what autovacuum records of a table it finds empty: pages, no rows
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type) VALUES ('EMPTY', 'SEND')");
        jdbc.update("DELETE FROM inbox_message");
        jdbc.execute("ANALYZE inbox_message");
        assertThat(jdbc.queryForObject("SELECT reltuples FROM pg_class WHERE relname = 'inbox_message'", Double.class)).isZero();
        // then a burst of rows due for the statement, before autovacuum looks again
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type, " + columns + ") SELECT 'DUE-' || g, 'SEND', "
                + values + " FROM generate_series(1, 3000) g");

        Map<String, Object> parameters = Map.of("batch", 200, "maxAttempts", 5, "retryDelayMillis", 1000, "stuckAfterMillis", 1000,
                "lostEventAfterMillis", 1000, "completedMillis", 1000, "deadMillis", 1000);
        String sql = SqlFiles.read(statement).replace(":#", ":");
        List<JsonNode> lockRows = new ArrayList<>();
        new TransactionTemplate(new DataSourceTransactionManager(connection)).executeWithoutResult(tx -> {
            String plan = new NamedParameterJdbcTemplate(jdbc).queryForObject("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, parameters, String.class);
            try {
                collect(new ObjectMapper().readTree(plan).get(0).get("Plan"), "LockRows", lockRows);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            tx.setRollbackOnly(); // EXPLAIN ANALYZE ran the statement: leave the rows as they were
        });

        assertThat(lockRows).as(statement + " locks its batch").isNotEmpty();
        assertThat(lockRows).as(statement + ": the locking subquery runs once, not once per row")
                .allSatisfy(node -> assertThat(node.get("Actual Loops").asLong()).isOne());
        jdbc.update("DELETE FROM inbox_message");
    }

    /**
     * Owed replies, years of refused ones (FAILED, older than every pending one) and a few never tried: the pending
     * branch of find-owed-replies.sql reads the pending ones only (V22's index by status, age). On V1's index (every
     * owed reply by age, the status not in it) it read and dropped every refused reply from the table, each tick.
     */
    @Test
    void theNeverTriedRepliesAreFoundWithoutReadingTheRefusedOnes() throws Exception {
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, reply_status, reply_reason_code, reply_failures,"
                + " reply_updated_at) SELECT 'REFUSED-' || g, 'SEND', 'DEAD', 'FAILED', 'DEAD', 30, now() - INTERVAL '2 days'"
                + " FROM generate_series(1, 20000) g");
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, reply_status, reply_reason_code,"
                + " reply_updated_at) SELECT 'OWED-' || g, 'SEND', 'DEAD', 'PENDING', 'DEAD', now() - INTERVAL '2 minutes'"
                + " FROM generate_series(1, 5) g");
        jdbc.execute("ANALYZE inbox_message");
        try {
            String sql = SqlFiles.read("find-owed-replies").replace(":#", ":");
            String plan = new NamedParameterJdbcTemplate(jdbc).queryForObject("EXPLAIN (ANALYZE, FORMAT JSON) " + sql,
                    Map.of("retryDelayMillis", 60_000L, "replyMaxRetryDelayMillis", 3_600_000L, "batch", 200), String.class);
            List<JsonNode> scans = new ArrayList<>();
            JsonNode root = new ObjectMapper().readTree(plan).get(0).get("Plan");
            collect(root, "Index Scan", scans);
            collect(root, "Index Only Scan", scans);
            collect(root, "Bitmap Index Scan", scans);
            collect(root, "Seq Scan", scans);
            // the pending branch: its scan reads the 5 pending replies, not the 20,000 refused ones
            assertThat(scans).anySatisfy(scan -> {
                assertThat(scan.path("Index Name").asText()).isEqualTo("inbox_message_reply_due_idx");
                assertThat(scan.path("Index Cond").asText()).contains("PENDING");
                assertThat(scan.path("Actual Rows").asLong()).isEqualTo(5);
                assertThat(scan.path("Rows Removed by Filter").asLong()).isZero();
            });
        } finally {
            jdbc.update("DELETE FROM inbox_message");
        }
    }

    private static void collect(JsonNode node, String type, List<JsonNode> found) {
        if (type.equals(node.path("Node Type").asText())) {
            found.add(node);
        }
        for (JsonNode child : node.path("Plans")) {
            collect(child, type, found);
        }
    }
}
