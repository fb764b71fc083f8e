-- Lost events: RECEIVED rows older than lost-event-after (a crash between commit and publish, a
-- publish that failed). Stamps published_at and returns the rows whose event the route republishes.
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-find-lost (camel-sql).
-- Why this WHERE: the age is on the database clock; a row republished within the same window is
-- skipped, so a backlog is not republished every tick; a bounded batch, oldest first, and SKIP LOCKED
-- so two job runs (a slow tick and the next) never take the same rows. Rows held behind an earlier unfinished
-- row of their subject are left out: older than any lost row after them, they would fill the batch with events
-- refused again while a truly lost row waited (RedeliveryStatementsTest). Each candidate is one probe of the
-- subject's unfinished-rows index (stopping at its first earlier row), so a tick during a long outage, when many
-- followers wait behind FAILED rows, walks those followers (held rows are not stamped): a few µs each, bounded by
-- what is waiting, not by the table.
-- The batch is an array taken once (ARRAY(SELECT ... FOR UPDATE SKIP LOCKED)), never a semi-join: with the
-- statistics of a table found empty (reltuples 0 over a page) the planner would nest the locking subquery in a
-- loop over the table and rescan it per row (the count fold took 10.9 s so; JobStatementPlansTest).
UPDATE inbox_message
   SET published_at = now()
 WHERE id = ANY (ARRAY(SELECT id
                          FROM inbox_message c
                         WHERE status = 'RECEIVED'
                           AND created_at < now() - :#lostEventAfterMillis * INTERVAL '1 millisecond'
                           AND (published_at IS NULL OR published_at < now() - :#lostEventAfterMillis * INTERVAL '1 millisecond')
                           -- a row behind an earlier unfinished row of its subject would only be refused again:
                           -- it is republished when that row finishes (find-successor.sql), or here once it has
                           AND NOT EXISTS (SELECT 1
                                             FROM inbox_message e
                                            WHERE e.srvy_drawup_no = c.srvy_drawup_no
                                              AND e.id < c.id
                                              AND e.status IN ('RECEIVED', 'PROCESSING', 'FAILED'))
                         ORDER BY created_at
                         LIMIT :#batch
                           FOR UPDATE SKIP LOCKED))
RETURNING id AS "inboxId",
          srvy_drawup_no AS "srvyDrawupNo",
          msg_type AS "msgType",
          trace_parent AS "traceParent"
