-- Claims one inbox row for this worker: RECEIVED|FAILED -> PROCESSING, attempts + 1, a fresh claim
-- token, the payload returned by the same statement, and the attempt opened in inbox_attempt.
-- Run by: processing/ClaimRepository.add (the idempotentConsumer step inbox-process-claim of
-- routes/inbox-process.camel.yaml), with Spring named parameters (:id, :token, :retryDelayMillis).
-- Why this WHERE: one conditional UPDATE is the only gateway into processing — racing consumers,
-- duplicate events and the redelivery job can never claim a row twice (a read-then-update could).
-- The ordering guard is part of it: an earlier unfinished row of the same subject blocks the claim,
-- so rows of one srvyDrawupNo are registered in arrival order; and any other row of the subject being
-- registered right now (PROCESSING) blocks it too, so one subject never has two registrations at once
-- (an operator's requeue of an older DEAD row while a later row is PROCESSING would otherwise run both).
WITH claimed AS (
    UPDATE inbox_message m
       SET status = 'PROCESSING',
           attempts = m.attempts + 1,
           claim_token = :token,
           held_reason = NULL,
           last_attempt_at = now(),
           updated_at = now()
     WHERE m.id = :id
       -- a FAILED row only once it is due (retry-delay after its last attempt ended: fail-row/defer-row set
       -- last_attempt_at then): any stray event (a rebalance,
       -- a successor release, a duplicate) would otherwise retry it at once and burn its attempts toward DEAD
       -- within seconds. An operator's requeue makes it RECEIVED, so that one needs no wait.
       AND (m.status = 'RECEIVED'
            OR (m.status = 'FAILED'
                AND COALESCE(m.last_attempt_at, '-infinity') <= now() - :retryDelayMillis * INTERVAL '1 millisecond'))
       AND NOT EXISTS (
           SELECT 1
             FROM inbox_message e
            WHERE e.srvy_drawup_no = m.srvy_drawup_no
              AND e.id < m.id
              AND e.status IN ('RECEIVED', 'PROCESSING', 'FAILED'))
       -- a second range of the subject's partial index (its status list repeated so the planner matches the
       -- index), not one scan of all the subject's unfinished rows
       AND NOT EXISTS (
           SELECT 1
             FROM inbox_message p
            WHERE p.srvy_drawup_no = m.srvy_drawup_no
              AND p.id > m.id
              AND p.status IN ('RECEIVED', 'PROCESSING', 'FAILED')
              AND p.status = 'PROCESSING')
       -- nor while the subject is being registered on the synchronous path (rollback toggle: its lease, V17; V20's
       -- expiry, so a holder gone for good blocks no longer than its registration could last): an operator's
       -- requeue of an older DEAD row would otherwise be registered beside it. Refused, the row is not held behind
       -- a row: the redelivery job republishes it (after lost-event-after; a FAILED one after retry-delay). A lease
       -- an older version wrote (no expires_at) does not hold the claim back.
       AND NOT EXISTS (
           SELECT 1
             FROM synchronous_lease l
            WHERE l.srvy_drawup_no = m.srvy_drawup_no
              AND l.expires_at > now())
    RETURNING m.id, m.srvy_drawup_no, m.msg_type, m.payload, m.payload_key_id, m.attempts, m.last_attempt_at, COALESCE(m.pending_since, m.created_at) AS owed_since
), opened AS (
    INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at)
    SELECT id, attempts, last_attempt_at
      FROM claimed
)
-- how long the row has owed work (database clock; from its requeue if an operator requeued it from DEAD, else its
-- arrival): a row waiting for its payload key is charged once it has waited key-wait. From the arrival alone, a
-- month-old DEAD row requeued while a pod still lacked its key was charged at once and went DEAD again
SELECT id, srvy_drawup_no, msg_type, payload, payload_key_id, attempts, EXTRACT(EPOCH FROM now() - owed_since) AS age_seconds
  FROM claimed
