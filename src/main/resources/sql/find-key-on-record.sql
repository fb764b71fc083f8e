-- Whether an Idempotency-Key went on record since this synchronous registration's claim: its lease taken, the key
-- is read again by a statement of its own, so it sees a commit the claim's snapshot could not (a retry that began
-- before the first registration's record committed and took the lease after that one released it).
-- Run by: routes/inbox-receive.camel.yaml, step inbox-receive-recheck-key (camel-sql), once the lease is held,
-- before the first downstream call.
-- Returns the key's row (its id, and refused_resend as claim-synchronous-registration.sql reads it), or nothing.
-- Why this WHERE: idempotency_key is unique (its index answers it); no key, no row.
SELECT id,
       status = 'COMPLETED' AND reply_reason_code = 'ALREADY_SUBMITTED' AS refused_resend
  FROM inbox_message
 WHERE idempotency_key = CAST(:#idempotencyKey AS TEXT)
