-- Operator sends an owed reply again at the next redelivery tick instead of at the end of its backoff (up to
-- reply-max-retry-delay, an hour): once the legacy system's endpoint is fixed, its replies go within a minute and
-- the reply alert clears when they are delivered. A PENDING or FAILED reply keeps its status and failures (a try
-- that fails again goes on from the same backoff, and is still counted as failing); only its last try is moved
-- back past any wait (dueAfterMillis, the longer of retry-delay and reply-max-retry-delay), so
-- find-owed-replies.sql takes it at the next tick. Audited with the operator's name, in one statement
-- (autocommit). A reply being sent right now (SENDING) is left to its sender: 409, as for a row owing none.
-- Run by: routes/inbox-requeue.camel.yaml, step inbox-retry-reply-row (camel-sql).
-- Why this shape: the row is locked first (FOR UPDATE), so the reply status answered, checked and audited are
-- the same one. No row back: no such row. changed false: no reply waits for a try (answered as fromReplyStatus).
WITH locked AS (
    SELECT id, reply_status
      FROM inbox_message
     WHERE id = :#id
       FOR UPDATE
), retried AS (
    UPDATE inbox_message m
       SET reply_updated_at = now() - (CAST(:#dueAfterMillis AS BIGINT) + 1) * INTERVAL '1 millisecond'
      FROM locked
     WHERE m.id = locked.id
       AND locked.reply_status IN ('PENDING', 'FAILED')
    RETURNING m.id
), audited AS (
    INSERT INTO operator_audit (actor, action, inbox_id, from_status, to_status)
    SELECT CAST(:#actor AS TEXT), 'RETRY_REPLY', locked.id, locked.reply_status, locked.reply_status
      FROM locked
      JOIN retried ON retried.id = locked.id
)
SELECT locked.id AS "inboxId",
       locked.reply_status AS "fromReplyStatus",
       retried.id IS NOT NULL AS "changed"
  FROM locked
  LEFT JOIN retried ON retried.id = locked.id
