-- The outcome this worker recorded when its statement (complete-row, fail-row or defer-row) committed but the
-- answer was lost (a connection dropped at the commit, a failover): the step's database redelivery ran it again,
-- found the row no longer PROCESSING under this token and returned nothing. Read back here, the outcome goes on as
-- recorded (the reply owed, the subject's next row released, counted as what it was) instead of as stale.
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-find-own-outcome (camel-sql), only when the record
-- step returned no row. Reads only.
-- Why this WHERE: the outcome statements leave the claim's token on the finished row; a later claim, the stuck-row
-- reset and a requeue replace or clear it. So only the worker whose claim finished the row finds it: one whose claim
-- was taken from it finds nothing, a stale outcome, whatever happened to the row since.
SELECT status
  FROM inbox_message
 WHERE id = :#id
   AND claim_token = CAST(:#token AS UUID)
   AND status IN ('COMPLETED', 'FAILED', 'DEAD')
