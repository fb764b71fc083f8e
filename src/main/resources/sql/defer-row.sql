-- Records an attempt that is not charged: a downstream it needs is plainly down (its circuit is open), the
-- database did not answer the registration's resend check (Outcome.databaseUnavailable), or the payload is sealed
-- with a key this instance lacks, within adapter.crypto.key-wait (Outcome.payloadKeyMissing), so the attempt count
-- goes back down and the row waits as FAILED for the next retry; and a claim found gone before a submission or resend
-- (Outcome.claimLost: its token is dead, so this changes nothing and the outcome is stale). Closes the
-- attempt as DEFERRED in the same statement. Autocommit.
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-record-deferred (camel-sql).
-- Why this WHERE: fenced by the claim token like complete-row.sql; nothing back = stale outcome, unless
-- find-own-outcome.sql reads it back (the token stays on the row).
WITH deferred AS (
    UPDATE inbox_message
       SET status = 'FAILED',
           attempts = attempts - 1,
           last_error = :#reason,
           last_error_code = NULL,
           updated_at = now(),
           -- the retry delay runs from here, not from the attempt's start (claim-row.sql)
           last_attempt_at = now()
     WHERE id = :#id
       AND status = 'PROCESSING'
       AND claim_token = CAST(:#token AS UUID)
    RETURNING id, status
), closed AS (
    UPDATE inbox_attempt a
       SET finished_at = now(),
           outcome = 'DEFERRED',
           reason = :#reason
      FROM deferred
     WHERE a.inbox_id = deferred.id
       AND a.attempt_no = :#attempt
       AND a.finished_at IS NULL
)
SELECT status
  FROM deferred
