-- The row this worker's claim took when the claim's COMMIT went through but its answer was lost (a
-- connection dropped at the commit, a failover): the claim step is tried again with the same token
-- (ClaimRepository keeps it on the exchange), finds its own claim here and goes on with that row, instead of
-- being refused as "taken" and leaving its own row PROCESSING until stuck-processing-after, an attempt charged.
-- Run by: processing/ClaimRepository.claim (inside the idempotentConsumer step inbox-process-claim of
-- routes/inbox-process.camel.yaml) only on a try after a failed one, with :id and :token. Reads only.
SELECT id, srvy_drawup_no, msg_type, payload, payload_key_id, attempts, EXTRACT(EPOCH FROM now() - created_at) AS age_seconds
  FROM inbox_message
 WHERE id = :id
   AND status = 'PROCESSING'
   AND claim_token = :token
