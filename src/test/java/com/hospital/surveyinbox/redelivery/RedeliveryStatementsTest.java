package com.hospital.surveyinbox.redelivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.OwnDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The redelivery job's statements on their own. Its batches leave out rows held behind an earlier unfinished row of their subject. Such a row is
 * older than any truly lost row after it, so a subject with a long-failing first row (its later rows RECEIVED,
 * waiting) filled every tick's batch with events the claim refused again, while a lost row of another subject waited
 * tick after tick; the held row is taken as soon as nothing earlier of its subject is unfinished. A database of its
 * own, so the statements see only these rows.
 */
class RedeliveryStatementsTest {

    static OwnDatabase database;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void migrated() {
        database = OwnDatabase.migrated("redelivery_statements");
        jdbc = database.jdbc();
    }

    @AfterAll
    static void drop() {
        database.close();
    }

    @BeforeEach
    void empty() {
        jdbc.update("DELETE FROM inbox_message");
    }

    @Test
    void heldRowsDoNotFillTheLostBatchAheadOfATrulyLostRow() {
        // subject HELD: its first row failed (not due for minutes), four later rows wait behind it, all old
        long blocker = insert("HELD", "FAILED", "now() - INTERVAL '1 hour'", "now()");
        for (int i = 0; i < 4; i++) {
            insert("HELD", "RECEIVED", "now() - INTERVAL '50 minutes'", null);
        }
        long lost = insert("LOST", "RECEIVED", "now() - INTERVAL '10 minutes'", null);

        assertThat(run("republish-lost-events")).as("the one truly lost row, in a batch of 3").containsExactly(lost);

        // the blocker finishes: its first follower is due as lost (its successor's event may have been lost too)
        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED' WHERE id = ?", blocker);
        jdbc.update("UPDATE inbox_message SET published_at = NULL");
        List<Long> taken = run("republish-lost-events");
        assertThat(taken).hasSize(2).contains(lost);
        assertThat(taken.get(0)).as("the subject's next row, no longer behind anything").isEqualTo(blocker + 1);
    }

    @Test
    void aDueRetryBehindAnEarlierUnfinishedRowIsLeftForThatRowToFinish() {
        // an operator requeued the subject's older DEAD row (RECEIVED again) while its later row was FAILED
        long requeued = insert("REQ", "RECEIVED", "now() - INTERVAL '1 hour'", null);
        jdbc.update("UPDATE inbox_message SET published_at = now() WHERE id = ?", requeued);
        long behind = insert("REQ", "FAILED", "now() - INTERVAL '50 minutes'", "now() - INTERVAL '40 minutes'");
        long due = insert("DUE", "FAILED", "now() - INTERVAL '30 minutes'", "now() - INTERVAL '20 minutes'");

        assertThat(run("republish-due-retries")).as("only the retry that can claim").containsExactly(due);

        jdbc.update("UPDATE inbox_message SET status = 'COMPLETED' WHERE id = ?", requeued);
        jdbc.update("UPDATE inbox_message SET published_at = NULL");
        assertThat(run("republish-due-retries")).containsExactly(behind, due);
    }

    /**
     * A stuck row whose abandoned attempt was its last allowed one goes DEAD (its DEAD reply owed): its attempt ends
     * DEAD, so the console's chart counts it as the DEAD alert does. Closed ABANDONED, the chart's dead series
     * stayed at 0 for a row that died and was replied to. A row reset to RECEIVED keeps ABANDONED.
     */
    @Test
    void aStuckRowThatGoesDeadEndsItsAttemptDeadAndTheChartCountsIt() {
        long dying = insert("STUCKDEAD", "PROCESSING", "now() - INTERVAL '2 hours'", "now() - INTERVAL '1 hour'");
        long retried = insert("STUCKRETRY", "PROCESSING", "now() - INTERVAL '2 hours'", "now() - INTERVAL '1 hour'");
        jdbc.update("UPDATE inbox_message SET attempts = CASE WHEN id = ? THEN 5 ELSE 2 END, "
                + "updated_at = now() - INTERVAL '1 hour' WHERE id IN (?, ?)", dying, dying, retried);
        for (long id : new long[] {dying, retried}) {
            jdbc.update("INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at) "
                    + "SELECT id, attempts, now() - INTERVAL '1 hour' FROM inbox_message WHERE id = ?", id);
        }

        List<Map<String, Object>> reset = database.named().queryForList(database.statement("reset-stuck-rows"), Map.of(
                "maxAttempts", 5, "stuckAfterMillis", 60_000, "batch", 10, "retryDelayMillis", 60_000));

        assertThat(reset).extracting(row -> row.get("status")).containsExactlyInAnyOrder("DEAD", "RECEIVED");
        assertThat(jdbc.queryForObject("SELECT outcome FROM inbox_attempt WHERE inbox_id = ?", String.class, dying)).isEqualTo("DEAD");
        assertThat(jdbc.queryForObject("SELECT outcome FROM inbox_attempt WHERE inbox_id = ?", String.class, retried)).isEqualTo("ABANDONED");
        List<Map<String, Object>> chart = jdbc.queryForList(database.statement("history-per-minute"),
                5, 5, "1970-01-01T00:00:00Z", 5, "1970-01-01T00:00:00Z", 5, "1970-01-01T00:00:00Z");
        assertThat(chart.stream().mapToLong(minute -> ((Number) minute.get("dead")).longValue()).sum()).isEqualTo(1);
    }

    private long insert(String subject, String status, String createdAt, String lastAttemptAt) {
        return jdbc.queryForObject("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status, attempts, created_at, last_attempt_at) "
                + "VALUES (?, 'SEND', ?, ?, " + createdAt + ", " + (lastAttemptAt == null ? "NULL" : lastAttemptAt) + ") RETURNING id",
                Long.class, subject, status, "RECEIVED".equals(status) ? 0 : 1);
    }

    private List<Long> run(String statement) {
        Map<String, Object> parameters = Map.of("batch", 3, "lostEventAfterMillis", 120_000, "retryDelayMillis", 600_000);
        return database.named().query(database.statement(statement), parameters,
                (row, n) -> row.getLong("inboxId")).stream().sorted().toList();
    }
}
