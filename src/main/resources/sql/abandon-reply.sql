-- Operator gives up an owed reply (CONTRACT §3: the redelivery job never does): PENDING|SENDING|FAILED -> NONE,
-- audited with the operator's name, in one statement (autocommit: one transaction). For a reply the legacy
-- system keeps refusing (a 4xx for good): it was retried hourly without end, its alert could not be cleared,
-- retention kept the row and its reason, and the image rollback's "no reply owed" could never hold. A reply
-- being sent right now is withdrawn too: should that send get through, it is recorded SENT (mark-reply-sent.sql:
-- the legacy system has it); a failed one records nothing. What was owed stays on the row (reply_reason_code,
-- and reply_reason unless retention removed the payload: then it goes, as on delivery); reply_last_error says
-- who gave it up. updated_at stays (the payload's retention counts from the row's close); reply_updated_at is
-- now, and delete-finished-rows.sql keeps a row whose reply was last acted on within its horizon, so this
-- audit entry is not removed by the next night's retention.
-- Run by: routes/inbox-requeue.camel.yaml, step inbox-abandon-reply-row (camel-sql).
-- Why this shape: the row is locked first (FOR UPDATE), so the reply status answered, checked and audited are
-- the same one. No row back: no such row. changed false: no reply is owed (answered as fromReplyStatus).
WITH locked AS (
    SELECT id, reply_status
      FROM inbox_message
     WHERE id = :#id
       FOR UPDATE
), abandoned AS (
    UPDATE inbox_message m
       SET reply_status = 'NONE',
           reply_last_error = 'abandoned by an operator',
           reply_reason = CASE WHEN m.redacted_at IS NOT NULL AND m.reply_reason IS NOT NULL THEN '(removed with the payload)'
                               ELSE m.reply_reason END,
           reply_updated_at = now()
      FROM locked
     WHERE m.id = locked.id
       AND locked.reply_status IN ('PENDING', 'SENDING', 'FAILED')
    RETURNING m.id
), audited AS (
    INSERT INTO operator_audit (actor, action, inbox_id, from_status, to_status)
    SELECT CAST(:#actor AS TEXT), 'ABANDON_REPLY', locked.id, locked.reply_status, 'NONE'
      FROM locked
      JOIN abandoned ON abandoned.id = locked.id
)
SELECT locked.id AS "inboxId",
       locked.reply_status AS "fromReplyStatus",
       abandoned.id IS NOT NULL AS "changed"
  FROM locked
  LEFT JOIN abandoned ON abandoned.id = locked.id
