-- What went on record since this synchronous registration's claim, read by a statement of its own once the lease is
-- held, so it sees commits the claim's snapshot could not:
-- - its Idempotency-Key (a retry that began before the first registration's record committed and took the lease
--   after that one released it): id, and refused_resend as claim-synchronous-registration.sql reads it;
-- - an unfinished row of the subject stored before the record's reserved id (an inbox-mode pod's reception, the
--   toggle rolling out, committed after the claim's snapshot but before its subject lock was granted): unfinished,
--   and the message joins the inbox behind that row, as the claim would have sent it.
-- Run by: routes/inbox-receive.camel.yaml, step inbox-receive-recheck-key (camel-sql), once the lease is held,
-- before the first downstream call.
-- Returns one row: id and refused_resend (null when the key is not on record, or there is none), unfinished.
-- Why this WHERE: idempotency_key is unique (its index answers it); the subject's rows by its partial index of
-- unfinished rows, below the reserved id only (a later row waits behind this registration's lease).
SELECT keyed.id,
       keyed.refused_resend,
       EXISTS (SELECT 1
                 FROM inbox_message
                WHERE srvy_drawup_no = CAST(:#srvyDrawupNo AS TEXT)
                  AND id < CAST(:#recordId AS BIGINT)
                  AND status IN ('RECEIVED', 'PROCESSING', 'FAILED')) AS unfinished
  FROM (SELECT 1) AS one
  LEFT JOIN (SELECT id,
                    status = 'COMPLETED' AND reply_reason_code = 'ALREADY_SUBMITTED' AS refused_resend
               FROM inbox_message
              WHERE idempotency_key = CAST(:#idempotencyKey AS TEXT)) AS keyed ON true
