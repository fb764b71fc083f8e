-- Operator makes due now every FAILED reply that may still wait out its backoff (up to reply-max-retry-delay, an
-- hour): after the legacy system's endpoint was down or refusing for a while, its replies go from the next
-- redelivery tick on (redeliver-batch-size a tick) instead of one by one over the next hour, and the reply alert
-- clears as they are delivered. The single-row retry-reply.sql for every such row at once: status and failures kept, only
-- the last try moved back past any wait (dueAfterMillis, the longer of retry-delay and reply-max-retry-delay), each
-- row audited (RETRY_REPLY) with the operator's name, in one statement (autocommit).
-- Run by: routes/inbox-requeue.camel.yaml, step inbox-retry-replies-rows (camel-sql).
-- Why this WHERE: a FAILED reply last tried more than dueAfterMillis ago is due already (the job takes it at its
-- tick), and a PENDING one waits retry-delay at most: only the FAILED replies tried within dueAfterMillis may wait
-- (one whose shorter backoff, after fewer failures, already ended is taken too: harmless, it is due either way). Their
-- range of V22's index (status, age), oldest first, at most the limit (adapter.inbox.bulk-requeue-max) per call; a
-- row locked right now (its reply being claimed or its row changed) is skipped, not waited for. A call that took the
-- limit may have left more: the next call takes the next oldest (a reply the job tried again and that failed again
-- meanwhile is among them, newest: calling until fewer than the limit are taken ends once the legacy side takes
-- replies, and a call made while it still refuses them undoes their backoff once more).
WITH waiting AS (
    SELECT id
      FROM inbox_message
     WHERE reply_status = 'FAILED'
       AND reply_updated_at >= now() - CAST(:#dueAfterMillis AS BIGINT) * INTERVAL '1 millisecond'
     ORDER BY reply_updated_at
     LIMIT CAST(:#limit AS INTEGER)
       FOR UPDATE SKIP LOCKED
), retried AS (
    UPDATE inbox_message m
       SET reply_updated_at = now() - (CAST(:#dueAfterMillis AS BIGINT) + 1) * INTERVAL '1 millisecond'
      FROM waiting
     WHERE m.id = waiting.id
    RETURNING m.id
), audited AS (
    INSERT INTO operator_audit (actor, action, inbox_id, from_status, to_status)
    SELECT CAST(:#actor AS TEXT), 'RETRY_REPLY', retried.id, 'FAILED', 'FAILED'
      FROM retried
)
SELECT count(*) AS "retried",
       CAST(:#limit AS INTEGER) AS "limit"
  FROM retried
