-- Rows that do not pile up: finished rows leave the table with their attempt history and operator audit.
-- Returns the status of each deleted row (for the counts).
-- Run by: routes/inbox-retention.camel.yaml, step inbox-retention-delete (camel-sql), in a loop while a
-- whole batch came back.
-- What goes: a DEAD row or a COMPLETED SUBMIT finished longer than keep-finished ago; a COMPLETED SEND finished
-- longer than keep-resendable ago. Why two horizons: a later SEND of a subject is a resend because a COMPLETED
-- SEND of it exists (has-completed-send.sql), so a subject's COMPLETED SENDs stay for keep-resendable — a resend
-- is recognised for keep-resendable after the subject's latest COMPLETED SEND.
-- What never goes: RECEIVED, PROCESSING and FAILED rows, whatever their age (they owe work; the ordering
-- guard only looks at unfinished rows); a row whose reply to the legacy system is not settled (PENDING,
-- SENDING, FAILED: the redelivery job still sends it); a COMPLETED SEND whose subject has an unfinished row or
-- a DEAD row an operator can still requeue (not redacted): that row's resend check needs it. An
-- Idempotency-Key is recognised while its row exists. A row whose reply was last acted on (sent, or given up by
-- an operator: abandon-reply.sql) within the horizon stays, with the audit of that act.
-- Each set is read through its own partial index (V7), oldest first, so a batch walks no rows that stay but the
-- few whose reply was acted on late;
-- SKIP LOCKED: a requeue or a second run never waits on it. The three deletes are one statement: the foreign
-- keys are checked at its end.
-- A SEND stored while this statement runs is not in its snapshot, so its subject's COMPLETED SEND past
-- keep-resendable may still go in this run: that SEND arrived past its predecessor's horizon, and is registered as a
-- first SEND exactly as one stored a moment later would be (nothing acknowledged is lost; the window is the
-- statement's seconds at a row's horizon).
WITH old_others AS (
    SELECT m.id
      FROM inbox_message m
     WHERE (m.status = 'DEAD' OR (m.status = 'COMPLETED' AND m.msg_type = 'SUBMIT'))
       AND m.updated_at < now() - :#keepFinishedMillis * INTERVAL '1 millisecond'
       AND m.reply_status IN ('NONE', 'SENT')
       AND (m.reply_updated_at IS NULL OR m.reply_updated_at < now() - :#keepFinishedMillis * INTERVAL '1 millisecond')
     ORDER BY m.updated_at
     LIMIT :#batch
       FOR UPDATE SKIP LOCKED
), old_sends AS (
    SELECT m.id
      FROM inbox_message m
     WHERE m.status = 'COMPLETED'
       AND m.msg_type = 'SEND'
       AND m.updated_at < now() - :#keepResendableMillis * INTERVAL '1 millisecond'
       AND m.reply_status IN ('NONE', 'SENT')
       AND (m.reply_updated_at IS NULL OR m.reply_updated_at < now() - :#keepResendableMillis * INTERVAL '1 millisecond')
       AND NOT EXISTS (SELECT 1
                         FROM inbox_message u
                        WHERE u.srvy_drawup_no = m.srvy_drawup_no
                          AND u.status IN ('RECEIVED', 'PROCESSING', 'FAILED'))
       AND NOT EXISTS (SELECT 1
                         FROM inbox_message r
                        WHERE r.srvy_drawup_no = m.srvy_drawup_no
                          AND r.status = 'DEAD'
                          AND r.redacted_at IS NULL)
     ORDER BY m.updated_at
     LIMIT :#batch
       FOR UPDATE SKIP LOCKED
), doomed AS (
    SELECT id FROM old_others
    UNION ALL
    SELECT id FROM old_sends
), attempts AS (
    DELETE FROM inbox_attempt a
     USING doomed d
     WHERE a.inbox_id = d.id
), audit AS (
    DELETE FROM operator_audit o
     USING doomed d
     WHERE o.inbox_id = d.id
)
DELETE FROM inbox_message m
 USING doomed d
 WHERE m.id = d.id
RETURNING m.status
