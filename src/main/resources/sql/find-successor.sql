-- The row of a subject that may claim now that one of its rows finished or failed, to be republished at once
-- instead of after lost-event-after: the subject's oldest claimable row with no earlier unfinished row. Usually
-- a later one; an earlier one when an operator requeued it while this row was being registered (claim-row.sql
-- holds it behind a PROCESSING row of its subject), which is why a FAILED outcome looks too.
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-find-successor (camel-sql), after a
-- row ended COMPLETED, DEAD or FAILED; and routes/inbox-receive.camel.yaml, step inbox-receive-find-held-row, once a
-- synchronous registration gave its subject's lease back (id -1: it has no row of its own to leave out).
-- Why this WHERE: any RECEIVED row counts, whether or not its hold was recorded yet (the claim and the hold
-- are two statements, so a hold may land just after this row finished); a FAILED one when it was held, or
-- when it is due (its retry's claim may have been refused just before this row finished, its hold not yet
-- written), so a retry that is not due still waits for retry-delay. A row behind an earlier unfinished one
-- (the usual case after a FAILED outcome: the failed row itself) would only be refused again, so it is not
-- returned.
SELECT c.id AS "inboxId",
       c.srvy_drawup_no AS "srvyDrawupNo",
       c.msg_type AS "msgType",
       c.trace_parent AS "traceParent"
  FROM inbox_message c
 WHERE c.srvy_drawup_no = :#srvyDrawupNo
   AND c.id <> :#id
   AND (c.status = 'RECEIVED'
        OR (c.status = 'FAILED'
            AND (c.held_reason IS NOT NULL
                 OR c.last_attempt_at <= now() - :#retryDelayMillis * INTERVAL '1 millisecond')))
   AND NOT EXISTS (
       SELECT 1
         FROM inbox_message e
        WHERE e.srvy_drawup_no = c.srvy_drawup_no
          AND e.id < c.id
          AND e.status IN ('RECEIVED', 'PROCESSING', 'FAILED'))
 ORDER BY c.id
 LIMIT 1
