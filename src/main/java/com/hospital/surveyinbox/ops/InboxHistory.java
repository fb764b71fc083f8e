package com.hospital.surveyinbox.ops;

import java.time.OffsetDateTime;
import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/** Per-attempt history and operator audit trail of a row, for the row detail. */
@Component
public class InboxHistory {

    /** One processing attempt: COMPLETED, FAILED, DEAD, DEFERRED (uncharged, downstream down) or ABANDONED. */
    public record AttemptView(int attempt, OffsetDateTime startedAt, OffsetDateTime finishedAt, String outcome,
                              String reason) {
    }

    /** One operator action. */
    public record AuditView(OffsetDateTime at, String actor, String action, String fromStatus, String toStatus) {
    }

    /** One minute of the console's chart: rows received, attempts ended COMPLETED / FAILED / DEAD. */
    public record MinuteView(OffsetDateTime minute, long received, long completed, long failed, long dead) {
    }

    private static final String PER_MINUTE = com.hospital.surveyinbox.inbox.SqlFiles.read("history-per-minute");

    private final JdbcTemplate jdbc;

    public InboxHistory(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** The attempts the row detail shows, oldest first, and how many earlier deferred ones it leaves out. */
    public record Attempts(List<AttemptView> shown, long omitted) {
    }

    /**
     * Most deferred attempts a row detail shows (its latest; every charged attempt is shown, they say why a row went
     * DEAD). Uncharged attempts have no bound of their own: a row whose payload key this instance lacks is deferred
     * every retry-delay for key-wait (a day: 1,440), a row behind a circuit open for days as often; all of them made
     * the detail (and the console's table) megabytes.
     */
    static final int MOST_SHOWN = 100;

    public Attempts attempts(long inboxId) {
        List<Long> total = new java.util.ArrayList<>(1);
        List<AttemptView> shown = jdbc.query("""
                SELECT attempt_no, started_at, finished_at, outcome, reason, total
                  FROM (SELECT id, attempt_no, started_at, finished_at, outcome, reason, count(*) OVER () AS total,
                               row_number() OVER (PARTITION BY outcome IS NOT DISTINCT FROM 'DEFERRED' ORDER BY id DESC) AS latest
                          FROM inbox_attempt
                         WHERE inbox_id = ?) a
                 WHERE latest <= ? OR outcome IS DISTINCT FROM 'DEFERRED'
                 ORDER BY id
                """, (rs, n) -> {
            if (n == 0) {
                total.add(rs.getLong("total"));
            }
            return new AttemptView(rs.getInt("attempt_no"),
                    rs.getObject("started_at", OffsetDateTime.class), rs.getObject("finished_at", OffsetDateTime.class),
                    rs.getString("outcome"), InboxRowView.shapesMasked(rs.getString("reason")));
        }, inboxId, MOST_SHOWN);
        return new Attempts(shown, total.isEmpty() ? 0 : total.get(0) - shown.size());
    }

    /**
     * The last {@code minutes} minutes, oldest first, the current (partial) minute last: the folded minutes before
     * the watermark read here, the rows counted from it on (V14). A fold between the two reads changes nothing: the
     * chart splits at the watermark it read.
     */
    public List<MinuteView> perMinute(int minutes) {
        return jdbc.query(PER_MINUTE, (rs, n) -> new MinuteView(rs.getObject("minute", OffsetDateTime.class),
                rs.getLong("received"), rs.getLong("completed"), rs.getLong("failed"), rs.getLong("dead")),
                chartParameters(minutes, foldedUntil()));
    }

    /** The chart's watermark (V14): the first minute not folded yet, whole minutes whatever the row holds. */
    public OffsetDateTime foldedUntil() {
        return jdbc.queryForObject("SELECT date_trunc('minute', folded_until) FROM inbox_history_folded", OffsetDateTime.class);
    }

    /** sql/history-per-minute.sql's parameters, in its order: minutes, minutes, watermark, then twice more both. */
    public static Object[] chartParameters(int minutes, OffsetDateTime foldedUntil) {
        return new Object[] {minutes, minutes, foldedUntil, minutes, foldedUntil, minutes, foldedUntil};
    }

    /** A row's audit trail as the detail shows it: its latest {@link #MOST_SHOWN} entries, oldest first, and how many came before. */
    public record Audit(List<AuditView> shown, long omitted) {
    }

    /**
     * The latest {@link #MOST_SHOWN} operator actions on the row, oldest first. A reply the legacy system keeps refusing
     * gets a RETRY_REPLY entry at every "retry the failed replies" an operator (or a runbook's script) calls, for as long
     * as it is owed (retention keeps such a row): the whole trail made the detail grow without bound.
     */
    public Audit audit(long inboxId) {
        List<Long> total = new java.util.ArrayList<>(1);
        List<AuditView> shown = jdbc.query("""
                SELECT at, actor, action, from_status, to_status, total
                  FROM (SELECT id, at, actor, action, from_status, to_status, count(*) OVER () AS total
                          FROM operator_audit
                         WHERE inbox_id = ?
                         ORDER BY id DESC
                         LIMIT ?) a
                 ORDER BY id
                """, (rs, n) -> {
            if (n == 0) {
                total.add(rs.getLong("total"));
            }
            return new AuditView(rs.getObject("at", OffsetDateTime.class), rs.getString("actor"),
                    rs.getString("action"), rs.getString("from_status"), rs.getString("to_status"));
        }, inboxId, MOST_SHOWN);
        return new Audit(shown, total.isEmpty() ? 0 : total.get(0) - shown.size());
    }
}
