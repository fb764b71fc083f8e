-- Replies owed and not delivered whose next try is due, oldest first: PENDING or FAILED, and the last try
-- (or the opening) older than retry-delay x 2^(tries - 1), at most reply-max-retry-delay.
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-find-replies (camel-sql); each id
-- then goes through routes/inbox-reply.camel.yaml, whose claim-reply.sql takes it or finds it taken.
-- Why this WHERE: a reply just opened (or just failed) is left to its own sender for retry-delay; a reply
-- the legacy system keeps refusing (a 4xx for a subject it does not know, an outage of days) is tried less
-- and less often instead of once a tick forever, so it neither fills every batch nor floods the legacy
-- side, and it is still never given up (the contract retries a failed reply). The exponent stops at 30 (a
-- double's 2^n stays finite whatever reply_attempts reaches). The plain retry-delay bound comes first so
-- the partial index on reply_updated_at serves the range; a bounded batch keeps one tick short.
SELECT id
  FROM inbox_message
 WHERE reply_status IN ('PENDING', 'FAILED')
   AND reply_updated_at < now() - :#retryDelayMillis * INTERVAL '1 millisecond'
   AND reply_updated_at < now() - LEAST(:#retryDelayMillis * power(2, LEAST(GREATEST(reply_attempts - 1, 0), 30)),
                                        :#replyMaxRetryDelayMillis) * INTERVAL '1 millisecond'
 ORDER BY reply_updated_at
 LIMIT :#batch
