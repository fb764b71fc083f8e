-- Says on a row whose claim was refused which earlier row of its subject it waits behind; returns
-- that row's id, or nothing when the refusal was not the ordering guard (taken or finished).
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-record-hold, right after a refused claim
-- (camel-sql, named parameter :#id).
-- Why this WHERE: only a row that is still claimable (RECEIVED|FAILED) can be "held"; the blocker is
-- the oldest row of the same subject that the claim's guard found in the way: an unfinished earlier row,
-- or a later one being registered right now (after an operator requeued this older row).
UPDATE inbox_message m
   SET held_reason = 'waiting behind inbox ' || blocker.id
  FROM (SELECT e.id
          FROM inbox_message e
          JOIN inbox_message me ON me.srvy_drawup_no = e.srvy_drawup_no
         WHERE me.id = :#id
           AND e.id <> me.id
           AND e.status IN ('RECEIVED', 'PROCESSING', 'FAILED')
           AND (e.id < me.id OR e.status = 'PROCESSING')
         ORDER BY e.id
         LIMIT 1) blocker
 WHERE m.id = :#id
   AND m.status IN ('RECEIVED', 'FAILED')
RETURNING blocker.id
