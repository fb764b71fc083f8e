-- A reply sender that vanished mid-send leaves SENDING behind: make it FAILED (retryable at once).
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-reset-stuck-replies (camel-sql).
-- Why this WHERE: SENDING untouched for stuck-processing-after means its sender is gone; its clock is
-- set back by the same amount, so find-owed-replies.sql takes it in this very tick unless its own backoff (its
-- failed tries, kept: a lost sender says nothing about the legacy side) asks for a longer wait.
UPDATE inbox_message
   SET reply_status = 'FAILED',
       reply_last_error = 'reply sender lost; retrying',
       reply_updated_at = now() - :#stuckAfterMillis * INTERVAL '1 millisecond'
 WHERE reply_status = 'SENDING'
   AND reply_updated_at < now() - :#stuckAfterMillis * INTERVAL '1 millisecond'
