-- Rows received and attempts ended, per minute, over the last ? minutes (oldest first, empty minutes as 0).
-- Run by: ops/InboxHistory.perMinute, for GET /ops/inbox/history (the operator console's chart).
-- What it counts: "received" = rows created in the minute; "completed", "failed", "dead" = attempts that
-- ended in the minute with that outcome (a row retried three times counts three FAILED attempts, which is
-- what an operator watching a failure rate wants to see). Reads only; both ranges read an index alone (V5, V11).
-- The window's start is written out in each range, not taken from the minutes series: the planner cannot see a
-- subquery's value and assumed a third of each table was in range, so on 10 million rows it scanned both tables
-- (640 ms for the last hour; bench/results/BIGTABLE.md). The same ? (minutes) three times.
WITH minutes AS (
    SELECT generate_series(date_trunc('minute', now()) - make_interval(mins => ? - 1),
                           date_trunc('minute', now()), interval '1 minute') AS minute
), received AS (
    SELECT date_trunc('minute', created_at) AS minute, count(*) AS n
      FROM inbox_message
     WHERE created_at >= date_trunc('minute', now()) - make_interval(mins => ? - 1)
     GROUP BY 1
), ended AS (
    SELECT date_trunc('minute', finished_at) AS minute,
           count(*) FILTER (WHERE outcome = 'COMPLETED') AS completed,
           count(*) FILTER (WHERE outcome = 'FAILED') AS failed,
           count(*) FILTER (WHERE outcome = 'DEAD') AS dead
      FROM inbox_attempt
     WHERE finished_at >= date_trunc('minute', now()) - make_interval(mins => ? - 1)
     GROUP BY 1
)
SELECT m.minute,
       coalesce(r.n, 0) AS received,
       coalesce(e.completed, 0) AS completed,
       coalesce(e.failed, 0) AS failed,
       coalesce(e.dead, 0) AS dead
  FROM minutes m
  LEFT JOIN received r ON r.minute = m.minute
  LEFT JOIN ended e ON e.minute = m.minute
 ORDER BY m.minute
