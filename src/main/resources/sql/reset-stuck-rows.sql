-- Stuck workers: a PROCESSING row untouched for stuck-processing-after goes back to RECEIVED (its claim
-- token dies with it, so the lost worker's late outcome is rejected by the fence) — or to DEAD when that
-- abandoned attempt was the last allowed one (a message that kills its worker cannot loop forever),
-- opening the DEAD reply like fail-row.sql. Its open attempt is closed as ABANDONED, or DEAD when the row went
-- DEAD (the console's chart counts DEAD attempts, as the DEAD alert counts the row). One statement.
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-reset-stuck (camel-sql).
-- Why this WHERE: updated_at is the worker's last sign of life; bounded batch, SKIP LOCKED. The attempt
-- count is not raised here (case study §4.5): the abandoned attempt was already counted by its claim.
-- The DEAD reply's clock starts reply-grace in the past so the same tick's reply sweep sends it.
-- Returns the reset rows (RECEIVED or DEAD) and, for each, the subject's row that may claim now (status
-- SUCCESSOR), as find-successor.sql finds it after a worker's outcome: a DEAD row releases the next row, and
-- a reset row of either kind releases an older row an operator requeued while it was PROCESSING.
-- The batch is an array taken once (ARRAY(SELECT ... FOR UPDATE SKIP LOCKED)), never a semi-join: with the
-- statistics of a table found empty (reltuples 0 over a page) the planner would nest the locking subquery in a
-- loop over the table and rescan it per row (the count fold took 10.9 s so; JobStatementPlansTest).
WITH stuck AS (
    UPDATE inbox_message
       SET status = CASE WHEN attempts >= :#maxAttempts THEN 'DEAD' ELSE 'RECEIVED' END,
           claim_token = NULL,
           last_error = 'worker lost while processing; reset by the redelivery job',
           last_error_code = NULL,
           updated_at = now(),
           published_at = now(),
           reply_status = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                               THEN 'PENDING' ELSE reply_status END,
           reply_reason_code = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                                    THEN 'DEAD' ELSE reply_reason_code END,
           reply_reason = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                               THEN 'worker lost while processing' ELSE reply_reason END,
           reply_updated_at = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                                   THEN now() - :#retryDelayMillis * INTERVAL '1 millisecond' ELSE reply_updated_at END,
           -- a new obligation starts without the last one's error (an operator's abandonment among them), as in fail-row.sql
           reply_last_error = CASE WHEN attempts >= :#maxAttempts AND NOT (reply_status = 'SENT' AND reply_reason_code = 'DEAD')
                                   THEN NULL ELSE reply_last_error END
     WHERE id = ANY (ARRAY(SELECT id
                              FROM inbox_message
                             WHERE status = 'PROCESSING'
                               AND updated_at < now() - :#stuckAfterMillis * INTERVAL '1 millisecond'
                             ORDER BY updated_at
                             LIMIT :#batch
                               FOR UPDATE SKIP LOCKED))
    RETURNING id, srvy_drawup_no, msg_type, status, trace_parent
), abandoned AS (
    UPDATE inbox_attempt a
       SET finished_at = now(),
           outcome = CASE WHEN stuck.status = 'DEAD' THEN 'DEAD' ELSE 'ABANDONED' END,
           reason = 'worker lost while processing'
      FROM stuck
     WHERE a.inbox_id = stuck.id
       AND a.finished_at IS NULL
)
SELECT id AS "inboxId",
       srvy_drawup_no AS "srvyDrawupNo",
       msg_type AS "msgType",
       status,
       trace_parent AS "traceParent"
  FROM stuck
UNION ALL
-- the subject's row that may claim now is returned too, so it is republished now rather than after
-- lost-event-after: claimable, and no earlier unfinished row in its way. This statement reads the reset rows
-- as they were (PROCESSING), so a reset row counts as in the way only where it now is: RECEIVED (then only an
-- older row qualifies), not DEAD.
SELECT n.id, n.srvy_drawup_no, n.msg_type, 'SUCCESSOR', n.trace_parent
  FROM stuck s
 CROSS JOIN LATERAL (SELECT c.id, c.srvy_drawup_no, c.msg_type, c.trace_parent
                       FROM inbox_message c
                      WHERE c.srvy_drawup_no = s.srvy_drawup_no
                        AND c.id <> s.id
                        AND (s.status = 'DEAD' OR c.id < s.id)
                        AND (c.status = 'RECEIVED'
                             OR (c.status = 'FAILED'
                                 AND (c.held_reason IS NOT NULL
                                      OR c.last_attempt_at <= now() - :#retryDelayMillis * INTERVAL '1 millisecond')))
                        AND NOT EXISTS (
                            SELECT 1
                              FROM inbox_message e
                             WHERE e.srvy_drawup_no = c.srvy_drawup_no
                               AND e.id < c.id
                               AND e.id <> s.id
                               AND e.status IN ('RECEIVED', 'PROCESSING', 'FAILED'))
                      ORDER BY c.id
                      LIMIT 1) n
