-- Replies owed and not delivered whose next try is due: PENDING (never tried since opened) once retry-delay old,
-- oldest first, then FAILED once its last try is older than retry-delay x 2^(failed tries - 1), at most
-- reply-max-retry-delay. reply_failures (V15) counts the failed tries of this reply only; a wait while the legacy
-- circuit was open is not one.
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-find-replies (camel-sql); each id
-- then goes through routes/inbox-reply.camel.yaml, whose claim-reply.sql takes it or finds it taken.
-- Why this WHERE: a reply just opened (or just failed) is left to its own sender for retry-delay; a reply
-- the legacy system keeps refusing (a 4xx for a subject it does not know, an answer that never comes) is tried
-- less and less often instead of once a tick forever, so it neither fills every batch nor floods the legacy
-- side, and it is still never given up (the contract retries a failed reply). The exponent stops at 30 (a
-- double's 2^n stays finite). The plain retry-delay bound is the one the partial index on reply_updated_at can
-- serve as a range; a bounded batch keeps one tick short.
-- Why the two statuses take turns: the replies the legacy system keeps refusing pile up over the years (never given
-- up), and each one's last try is older than a reply opened a minute ago: oldest first, a batch full of them held
-- every new DEAD or NOTIFY_SKIPPED reply back by as many ticks as they fill; PENDING first, a legacy system taking
-- fewer replies than the inbox owes it left every FAILED one untried for as long. Each branch reads its status's
-- range of V22's index (status, age) in order, one batch at most, numbered by age; the batch takes the oldest
-- PENDING, the oldest FAILED, the second PENDING, ..., so each status gets half a full batch and all of the
-- rest when the other has fewer due.
SELECT id
  FROM ((SELECT id, 0 AS tried, row_number() OVER (ORDER BY reply_updated_at) AS turn
           FROM inbox_message
          WHERE reply_status = 'PENDING'
            AND reply_updated_at < now() - :#retryDelayMillis * INTERVAL '1 millisecond'
          ORDER BY reply_updated_at
          LIMIT :#batch)
        UNION ALL
        (SELECT id, 1 AS tried, row_number() OVER (ORDER BY reply_updated_at) AS turn
           FROM inbox_message
          WHERE reply_status = 'FAILED'
            AND reply_updated_at < now() - :#retryDelayMillis * INTERVAL '1 millisecond'
            AND reply_updated_at < now() - LEAST(:#retryDelayMillis * power(2, LEAST(GREATEST(reply_failures - 1, 0), 30)),
                                                 :#replyMaxRetryDelayMillis) * INTERVAL '1 millisecond'
          ORDER BY reply_updated_at
          LIMIT :#batch)) owed
 ORDER BY turn, tried
 LIMIT :#batch
