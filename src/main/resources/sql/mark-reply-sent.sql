-- The legacy system took the reply (2xx): SENDING -> SENT.
-- Run by: routes/inbox-reply.camel.yaml, step inbox-reply-record-sent (camel-sql).
-- Why this WHERE: only the sender holding the obligation records its result: SENDING, and taken by this
-- sender (reply_attempts as claim-reply.sql returned it). A sender whose obligation an operator's requeue
-- withdrew, or that a newer sender took over, changes nothing - but a DEAD reply the requeue withdrew while
-- it was on the wire and that got through is recorded SENT: the legacy system has it, so the row dying again
-- owes no second DEAD reply (fail-row.sql); so is a reply an operator abandoned while it was on the wire (abandon-reply.sql).
UPDATE inbox_message
   SET reply_status = 'SENT',
       reply_last_error = NULL,
       -- a reason kept past the payload's removal only because it was still owed goes now (redact-closed-payloads.sql)
       reply_reason = CASE WHEN redacted_at IS NOT NULL AND reply_reason IS NOT NULL THEN '(removed with the payload)'
                           ELSE reply_reason END,
       reply_updated_at = now()
 WHERE id = :#id
   AND reply_attempts = :#replyAttempt
   AND (reply_status = 'SENDING'
        OR (reply_status = 'NONE' AND (reply_reason_code = 'DEAD' OR reply_last_error = 'abandoned by an operator'))
        -- this sender's own record tried again after its COMMIT's answer was lost (inbox-reply-errors): only this
        -- sender holds this reply_attempts, so it finds its delivery recorded and is counted sent, not stale
        OR reply_status = 'SENT')
