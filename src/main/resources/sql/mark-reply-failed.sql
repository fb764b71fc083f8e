-- The reply did not get through: SENDING -> FAILED with the reason; the redelivery job retries it
-- once retry-delay has passed.
-- Run by: routes/inbox-reply.camel.yaml, step inbox-reply-record-failed (camel-sql).
-- Why this WHERE: only the sender holding the obligation records its result: SENDING, and taken by this
-- sender (reply_attempts as claim-reply.sql returned it). A sender whose obligation an operator's requeue
-- withdrew, or that a newer sender took over, changes nothing.
UPDATE inbox_message
   SET reply_status = 'FAILED',
       reply_last_error = :#error,
       -- 1, or 0 for a wait while the legacy circuit is open (nothing was sent): the backoff's exponent (V15)
       reply_failures = reply_failures + :#failed,
       reply_updated_at = now()
 WHERE id = :#id
   AND reply_status = 'SENDING'
   AND reply_attempts = :#replyAttempt
