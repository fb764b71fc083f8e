-- Completes a claimed row (PROCESSING -> COMPLETED), opens a reply obligation when the outcome owes
-- one (NOTIFY_SKIPPED, ALREADY_SUBMITTED), and closes the open attempt: one statement, autocommit.
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-record-completed (camel-sql).
-- Why this WHERE: fenced by the claim token. A worker whose claim was reset (stuck-row reset,
-- operator requeue) and taken by a newer attempt changes nothing: no row comes back, the route logs
-- and counts a stale outcome. The token stays on the finished row (until a new claim replaces it or a requeue
-- clears it): find-own-outcome.sql reads this worker's outcome back by it when the answer was lost.
WITH done AS (
    UPDATE inbox_message
       SET status = 'COMPLETED',
           last_error = NULL,
           last_error_code = NULL,
           updated_at = now(),
           reply_status = CASE WHEN CAST(:#replyCode AS TEXT) IS NULL THEN reply_status ELSE 'PENDING' END,
           reply_reason_code = COALESCE(CAST(:#replyCode AS TEXT), reply_reason_code),
           reply_reason = COALESCE(CAST(:#replyReason AS TEXT), reply_reason),
           reply_updated_at = CASE WHEN CAST(:#replyCode AS TEXT) IS NULL THEN reply_updated_at ELSE now() END,
           -- a new obligation starts without the last one's error (an operator's abandonment among them)
           reply_last_error = CASE WHEN CAST(:#replyCode AS TEXT) IS NULL THEN reply_last_error ELSE NULL END
     WHERE id = :#id
       AND status = 'PROCESSING'
       AND claim_token = CAST(:#token AS UUID)
    RETURNING id, status
), closed AS (
    UPDATE inbox_attempt a
       SET finished_at = now(),
           outcome = 'COMPLETED'
      FROM done
     WHERE a.inbox_id = done.id
       AND a.attempt_no = :#attempt
       AND a.finished_at IS NULL
)
SELECT status
  FROM done
