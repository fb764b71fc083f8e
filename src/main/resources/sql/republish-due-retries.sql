-- Due retries: FAILED rows whose last attempt is older than retry-delay. Stamps published_at and
-- returns the rows whose event the route republishes (the consumer's claim then charges the attempt).
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-find-retries (camel-sql).
-- Why this WHERE: as republish-lost-events.sql, aged by last_attempt_at: the retry interval counts
-- from the attempt that failed, not from when the row arrived.
-- The batch is an array taken once (ARRAY(SELECT ... FOR UPDATE SKIP LOCKED)), never a semi-join: with the
-- statistics of a table found empty (reltuples 0 over a page) the planner would nest the locking subquery in a
-- loop over the table and rescan it per row (the count fold took 10.9 s so; JobStatementPlansTest).
UPDATE inbox_message
   SET published_at = now()
 WHERE id = ANY (ARRAY(SELECT id
                          FROM inbox_message c
                         WHERE status = 'FAILED'
                           AND last_attempt_at < now() - :#retryDelayMillis * INTERVAL '1 millisecond'
                           AND (published_at IS NULL OR published_at < now() - :#retryDelayMillis * INTERVAL '1 millisecond')
                           -- as in republish-lost-events.sql: a retry behind an earlier unfinished row would be refused
                           AND NOT EXISTS (SELECT 1
                                             FROM inbox_message e
                                            WHERE e.srvy_drawup_no = c.srvy_drawup_no
                                              AND e.id < c.id
                                              AND e.status IN ('RECEIVED', 'PROCESSING', 'FAILED'))
                         ORDER BY last_attempt_at
                         LIMIT :#batch
                           FOR UPDATE SKIP LOCKED))
RETURNING id AS "inboxId",
          srvy_drawup_no AS "srvyDrawupNo",
          msg_type AS "msgType",
          trace_parent AS "traceParent"
