-- Takes a row's reply obligation: one sender at a time, never after it was delivered.
-- Run by: routes/inbox-reply.camel.yaml, step inbox-reply-claim (camel-sql), with the sender's token.
-- Why this WHERE: only PENDING (owed) or FAILED (owed, last try failed) can be taken; SENDING belongs
-- to another sender, SENT is done — so each reason is delivered successfully at most once. The new
-- reply_attempts comes back as replyAttempt: it names this sender, and only it may record the result.
-- SENDING under this sender's own token is the same claim tried again (the step's database redelivery) after a
-- COMMIT whose answer was lost: taken again as it stands (no second try counted), not refused as another's.
-- The token stays on the row after the reply leaves SENDING (V18); only this claim of a SENDING row reads it.
UPDATE inbox_message
   SET reply_status = 'SENDING',
       reply_claim_token = CAST(:#token AS uuid),
       reply_attempts = CASE WHEN reply_status = 'SENDING' THEN reply_attempts ELSE reply_attempts + 1 END,
       -- a reply never tried since it was opened starts its backoff afresh (V15)
       reply_failures = CASE WHEN reply_status = 'PENDING' THEN 0 ELSE reply_failures END,
       reply_updated_at = now()
 WHERE id = :#id
   AND (reply_status IN ('PENDING', 'FAILED')
        OR (reply_status = 'SENDING' AND reply_claim_token = CAST(:#token AS uuid)))
RETURNING id AS "id",
          srvy_drawup_no AS "srvyDrawupNo",
          reply_reason_code AS "reasonCode",
          reply_reason AS "reason",
          reply_attempts AS "replyAttempt"
