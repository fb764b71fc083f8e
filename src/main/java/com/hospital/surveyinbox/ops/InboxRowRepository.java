package com.hospital.surveyinbox.ops;

import com.hospital.surveyinbox.inbox.InboxStatus;
import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Query;

/** Operator reads of the inbox (newest first). */
public interface InboxRowRepository extends JpaRepository<InboxRowEntity, Long> {

    /**
     * Rows per status (statuses without rows may be absent): the finished ones from counters kept as rows
     * change, the unfinished ones counted through their index - never a scan of the whole table (V8).
     */
    @Query(value = "SELECT status, total FROM inbox_status_counts()", nativeQuery = true)
    List<Object[]> countByStatus();

    /**
     * Age in seconds of the oldest row that still owes work (RECEIVED, PROCESSING, FAILED: {@link InboxStatus#UNFINISHED}),
     * measured on the database clock (0, never negative, for rows it dates in the future after a step back). Read per
     * status so that no plan walks the history: {@code min(created_at) WHERE
     * status IN (unfinished)} was planned as a walk of the full created_at index from its oldest entry (the unfinished
     * rows are the newest: the whole history read first, on every pod every 5 s; InboxReadsAtScaleTest). RECEIVED
     * rows through their created_at index (its first entry; requeued ones, skipped there, through V24's index by
     * the time they were requeued); PROCESSING and FAILED rows (a few, or an outage's backlog) each read as a set
     * through its own partial index (OFFSET 0 keeps the planner from turning their min into that walk). A row requeued
     * from DEAD owes work since its requeue ({@code pending_since}, V23), not since its arrival.
     */
    @Query(value = """
            -- GREATEST ignores NULL: no unfinished row reads 0
            SELECT GREATEST(0, EXTRACT(EPOCH FROM now() - LEAST(
                       (SELECT min(created_at)
                          FROM inbox_message
                         WHERE status = 'RECEIVED' AND pending_since IS NULL),
                       (SELECT min(pending_since)
                          FROM inbox_message
                         WHERE status = 'RECEIVED' AND pending_since IS NOT NULL),
                       (SELECT min(COALESCE(pending_since, created_at))
                          FROM (SELECT pending_since, created_at FROM inbox_message WHERE status = 'PROCESSING' OFFSET 0) processing),
                       (SELECT min(COALESCE(pending_since, created_at))
                          FROM (SELECT pending_since, created_at FROM inbox_message WHERE status = 'FAILED' OFFSET 0) failed))))""",
            nativeQuery = true)
    double oldestPendingAgeSeconds();

    /**
     * Owed replies that failed at least once and are not delivered yet (FAILED, or SENDING a retry): the legacy
     * system refused or did not answer them; waits while its circuit was open do not count (V15). Counted through
     * the partial index of owed replies, which holds only those.
     */
    @Query(value = """
            SELECT count(*)
              FROM inbox_message
             WHERE reply_status IN ('PENDING', 'SENDING', 'FAILED')
               AND reply_status <> 'PENDING'
               AND reply_failures > 0""", nativeQuery = true)
    long failingReplies();

    /**
     * Seconds since the clustered redelivery job last recorded a tick, on the database clock (any instance's: one
     * runs each tick); -1 when it never has, 0 for a run the database clock, stepped back, dates in the future (read
     * as -1 that was "never ran" on the gauge a silent job's alert reads). Its index's last entry.
     */
    @Query(value = """
            SELECT CASE WHEN max(fired_at) IS NULL THEN -1 ELSE GREATEST(0, EXTRACT(EPOCH FROM now() - max(fired_at))) END
              FROM redelivery_run""", nativeQuery = true)
    double lastRedeliveryRunAgeSeconds();

    /** The database's clock now (seconds since the epoch, microseconds), for the pod-versus-database clock gauge. */
    @Query(value = "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS double precision)", nativeQuery = true)
    double databaseEpochSeconds();

    /**
     * How long the oldest closed row has been past its retention time and still holds its payload (seconds, database
     * clock; 0 when none is): the nightly retention job keeps it under a day. The first entry of each status's range
     * of the retention sweep's own index (closed, not redacted, by status and close time).
     */
    @Query(value = """
            SELECT GREATEST(0,
                   COALESCE((SELECT EXTRACT(EPOCH FROM now() - min(updated_at)) FROM inbox_message
                              WHERE status = 'COMPLETED' AND redacted_at IS NULL) - :completedSeconds, 0),
                   COALESCE((SELECT EXTRACT(EPOCH FROM now() - min(updated_at)) FROM inbox_message
                              WHERE status = 'DEAD' AND redacted_at IS NULL) - :deadSeconds, 0))""", nativeQuery = true)
    double retentionOverdueSeconds(@org.springframework.data.repository.query.Param("completedSeconds") double completedSeconds,
                                   @org.springframework.data.repository.query.Param("deadSeconds") double deadSeconds);
}
