-- Replies owed and not delivered: PENDING or FAILED for longer than retry-delay, oldest first.
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-find-replies (camel-sql); each id
-- then goes through routes/inbox-reply.camel.yaml, whose claim-reply.sql takes it or finds it taken.
-- Why this WHERE: a reply just opened (or just failed) is left to its own sender for retry-delay; a
-- bounded batch keeps one tick short.
SELECT id
  FROM inbox_message
 WHERE reply_status IN ('PENDING', 'FAILED')
   AND reply_updated_at < now() - :#retryDelayMillis * INTERVAL '1 millisecond'
 ORDER BY reply_updated_at
 LIMIT :#batch
