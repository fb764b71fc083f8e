-- Operator requeue of one row: DEAD|FAILED -> RECEIVED with attempts reset, audited with the operator's name,
-- in one statement (autocommit: one transaction). A DEAD reply not yet delivered is withdrawn (the row gets
-- another chance), also one being sent right now: that sender can no longer record its result
-- (mark-reply-*.sql are fenced by reply_attempts), so a reply timing out after the requeue cannot come back
-- as owed and be sent for a row that meanwhile completed; a delivered one stays delivered. published_at is now: the event is published next, and
-- the redelivery job republishes it if that publish is lost. A DEAD row owes work again from now (pending_since: the
-- backlog's age counts from the requeue, not from its arrival a month ago); a FAILED row has owed it all along.
-- Run by: routes/inbox-requeue.camel.yaml, steps inbox-requeue-row and inbox-requeue-many-row (camel-sql).
-- Why this shape: the row is locked first (FOR UPDATE), so the status answered, the status the UPDATE checks
-- and the status audited are the same one; a worker or another operator that changed the row meanwhile is
-- waited for and seen. No row back: no such row. requeued false: its status (answered as fromStatus) is not
-- DEAD or FAILED, or not the status a bulk requeue chose it by (expectedStatus: a FAILED row chosen by a bulk requeue
-- of FAILED rows that went DEAD meanwhile keeps its DEAD reply; null for a single row, which takes either), or
-- retention removed its payload (nothing left to process).
WITH locked AS (
    SELECT id, status, redacted_at
      FROM inbox_message
     WHERE id = :#id
       FOR UPDATE
), requeued AS (
    UPDATE inbox_message m
       SET status = 'RECEIVED',
           attempts = 0,
           last_error = NULL,
           last_error_code = NULL,
           held_reason = NULL,
           claim_token = NULL,
           updated_at = now(),
           published_at = now(),
           pending_since = CASE WHEN locked.status = 'DEAD' THEN now() ELSE m.pending_since END,
           reply_status = CASE WHEN m.reply_status IN ('PENDING', 'SENDING', 'FAILED') AND m.reply_reason_code = 'DEAD'
                               THEN 'NONE' ELSE m.reply_status END
      FROM locked
     WHERE m.id = locked.id
       AND locked.status IN ('DEAD', 'FAILED')
       AND locked.status = COALESCE(CAST(:#expectedStatus AS TEXT), locked.status)
       AND locked.redacted_at IS NULL
    RETURNING m.id, m.srvy_drawup_no, m.msg_type, m.trace_parent
), audited AS (
    INSERT INTO operator_audit (actor, action, inbox_id, from_status, to_status)
    SELECT CAST(:#actor AS TEXT), 'REQUEUE', locked.id, locked.status, 'RECEIVED'
      FROM locked
      JOIN requeued ON requeued.id = locked.id
)
SELECT locked.id AS "inboxId",
       locked.status AS "fromStatus",
       requeued.id IS NOT NULL AS "requeued",
       requeued.srvy_drawup_no AS "srvyDrawupNo",
       requeued.msg_type AS "msgType",
       requeued.trace_parent AS "traceParent"
  FROM locked
  LEFT JOIN requeued ON requeued.id = locked.id
