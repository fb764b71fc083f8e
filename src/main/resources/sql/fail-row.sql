-- Records a failed attempt: FAILED, or DEAD when it was the last allowed one; going DEAD opens the
-- DEAD reply in the same statement (so a DEAD row can never miss its reply), unless a DEAD reply was
-- already delivered for this row (a requeued row that dies again is not reported twice). Closes the
-- attempt in the same statement. last_attempt_at becomes the failure's time: the retry delay (claim-row.sql,
-- republish-due-retries.sql) runs from it, so an attempt that lasted longer than the delay is not due at once.
-- Autocommit.
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-record-failed (camel-sql).
-- Why this WHERE: fenced by the claim token like complete-row.sql; nothing back = stale outcome, unless
-- find-own-outcome.sql reads it back (the token stays on the row).
WITH failed AS (
    UPDATE inbox_message
       SET status = CASE WHEN attempts >= :#maxAttempts THEN 'DEAD' ELSE 'FAILED' END,
           last_error = :#reason,
           last_error_code = :#code,
           updated_at = now(),
           -- the retry delay runs from the failure, not from the attempt's start (claim-row.sql)
           last_attempt_at = now(),
           reply_status = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                               THEN 'PENDING' ELSE reply_status END,
           reply_reason_code = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                                    THEN 'DEAD' ELSE reply_reason_code END,
           reply_reason = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                               THEN :#reason ELSE reply_reason END,
           reply_updated_at = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                                   THEN now() ELSE reply_updated_at END,
           -- a new obligation starts without the last one's error (an operator's abandonment among them)
           reply_last_error = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                                   THEN NULL ELSE reply_last_error END
     WHERE id = :#id
       AND status = 'PROCESSING'
       AND claim_token = CAST(:#token AS UUID)
    RETURNING id, status
), closed AS (
    UPDATE inbox_attempt a
       SET finished_at = now(),
           outcome = failed.status,
           -- for a system error, where and what (Outcome.failureDetail); the row keeps "system error"
           reason = :#detail
      FROM failed
     WHERE a.inbox_id = failed.id
       AND a.attempt_no = :#attempt
       AND a.finished_at IS NULL
)
SELECT status
  FROM failed
