-- The outcome this worker recorded when its statement (complete-row, fail-row or defer-row) committed but the
-- answer was lost (a connection dropped at the commit, a failover): the step's database redelivery ran it again,
-- found the row no longer PROCESSING under this token and returned nothing. Read back here, the outcome goes on as
-- recorded (the reply owed, the subject's next row released, counted as what it was) instead of as stale.
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-find-own-outcome (camel-sql), only when the record
-- step returned no row. Reads only.
-- Why this WHERE: the row's latest attempt is this worker's (its number; the row finished, so nothing claimed it
-- since) and was closed by one of the outcome statements; a stuck-row reset closes it ABANDONED and a requeue
-- makes the row RECEIVED, so a worker whose claim was taken from it still finds nothing: a stale outcome.
SELECT m.status
  FROM inbox_message m
  JOIN LATERAL (
        SELECT a.attempt_no, a.outcome, a.finished_at
          FROM inbox_attempt a
         WHERE a.inbox_id = m.id
         ORDER BY a.id DESC
         LIMIT 1) AS latest ON true
 WHERE m.id = :#id
   AND m.status IN ('COMPLETED', 'FAILED', 'DEAD')
   AND latest.attempt_no = :#attempt
   AND latest.finished_at IS NOT NULL
   AND latest.outcome IN ('COMPLETED', 'FAILED', 'DEAD', 'DEFERRED')
