-- The row this worker's claim took when the claim's COMMIT went through but its answer was lost (a
-- connection dropped at the commit, a failover): the claim step is tried again with the same token
-- (ClaimRepository keeps it on the exchange), finds its own claim here and goes on with that row, instead of
-- being refused as "taken" and leaving its own row PROCESSING until stuck-processing-after, an attempt charged.
-- Renews updated_at (the worker's sign of life that reset-stuck-rows.sql reads): a retry that found its claim
-- after the claim's minute of tries (routes/inbox-process.camel.yaml, inbox-process-row-claim-unanswered) starts
-- the row's registration with the whole of stuck-processing-after ahead of it, as a fresh claim does.
-- Run by: processing/ClaimRepository.claim (inside the idempotentConsumer step inbox-process-claim of
-- routes/inbox-process.camel.yaml) only on a try after a failed one, with :id and :token. Fenced by the token.
UPDATE inbox_message
   SET updated_at = now()
 WHERE id = :id
   AND status = 'PROCESSING'
   AND claim_token = :token
RETURNING id, srvy_drawup_no, msg_type, payload, payload_key_id, attempts, EXTRACT(EPOCH FROM now() - COALESCE(pending_since, created_at)) AS age_seconds
