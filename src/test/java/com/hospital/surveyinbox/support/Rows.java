package com.hospital.surveyinbox.support;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.springframework.jdbc.core.JdbcTemplate;

/** Reads inbox rows straight from PostgreSQL and waits (with a deadline) for states. */
public final class Rows {

    private final JdbcTemplate jdbc;

    public Rows(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    public Map<String, Object> row(String inboxId) {
        return jdbc.queryForMap("SELECT * FROM inbox_message WHERE id = ?", Long.parseLong(inboxId));
    }

    public String status(String inboxId) {
        return jdbc.queryForObject("SELECT status FROM inbox_message WHERE id = ?", String.class, Long.parseLong(inboxId));
    }

    public int attempts(String inboxId) {
        return jdbc.queryForObject("SELECT attempts FROM inbox_message WHERE id = ?", Integer.class, Long.parseLong(inboxId));
    }

    public void awaitStatus(String inboxId, String status) {
        awaitStatus(inboxId, status, Duration.ofSeconds(30));
    }

    public void awaitStatus(String inboxId, String status, Duration timeout) {
        await().atMost(timeout).pollInterval(Duration.ofMillis(50))
                .until(() -> status.equals(status(inboxId)));
    }

    /** Waits for a FAILED/DEAD/COMPLETED row whose attempt count reached {@code attempts}. */
    public void awaitAttempt(String inboxId, int attempts, String status) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> attempts(inboxId) == attempts && status.equals(status(inboxId)));
    }

    /** Ids of the rows whose subject starts with {@code prefix}. */
    public Set<String> ids(String prefix) {
        return new HashSet<>(jdbc.queryForList("SELECT id::text FROM inbox_message WHERE srvy_drawup_no LIKE ?", String.class,
                prefix + "%"));
    }

    /** Rows whose subject starts with {@code prefix} in {@code status}. */
    public long count(String prefix, String status) {
        return jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status = ?", Long.class,
                prefix + "%", status);
    }

    /** Waits until {@code expected} rows of the prefix are COMPLETED or DEAD. */
    public void awaitAllClosed(String prefix, long expected, Duration timeout) {
        await().atMost(timeout).pollInterval(Duration.ofMillis(200)).until(() ->
                count(prefix, "COMPLETED") + count(prefix, "DEAD") == expected);
    }
}
