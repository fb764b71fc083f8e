-- The next row of a subject that may be waiting for the row that just finished, to be republished at
-- once instead of after lost-event-after: the oldest claimable row of the subject. Usually a later one;
-- an earlier one when an operator requeued it while this row was being registered (claim-row.sql holds
-- it behind a PROCESSING row of its subject).
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-find-successor (camel-sql), after a
-- row ended COMPLETED or DEAD.
-- Why this WHERE: any RECEIVED successor counts, whether or not its hold was recorded yet (the claim
-- and the hold are two statements, so a hold may land just after this row finished); a FAILED one
-- only when it was held, so a plain retry still waits for retry-delay.
SELECT id AS "inboxId",
       srvy_drawup_no AS "srvyDrawupNo",
       msg_type AS "msgType",
       trace_parent AS "traceParent"
  FROM inbox_message
 WHERE srvy_drawup_no = :#srvyDrawupNo
   AND id <> :#id
   AND (status = 'RECEIVED' OR (status = 'FAILED' AND held_reason IS NOT NULL))
 ORDER BY id
 LIMIT 1
