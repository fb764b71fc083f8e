-- Rows received and attempts ended, per minute, over the last ? minutes (oldest first, empty minutes as 0).
-- Run by: ops/InboxHistory.perMinute, for GET /ops/inbox/history (the operator console's chart), with the watermark
-- it read just before (inbox_history_folded.folded_until, V14).
-- What it counts: "received" = rows created in the minute; "completed", "failed", "dead" = attempts that
-- ended in the minute with that outcome (a row retried three times counts three FAILED attempts, which is
-- what an operator watching a failure rate wants to see). Minutes before the watermark come from their counts
-- (inbox_history_minute, folded by the redelivery job); from the watermark on, the rows are counted (V5, V11: each
-- range reads an index alone), so the chart is exact whether or not the job has folded lately, and its cost is the
-- chart's minutes plus the last few minutes' rows, whatever the table's size or the day's traffic.
-- Each range's start is written out, not taken from the minutes series or a subquery: the planner cannot see a
-- subquery's value and assumed a third of each table was in range, so on 10 million rows it scanned both tables
-- (640 ms for the last hour; bench/results/BIGTABLE.md).
-- Parameters, in order: minutes, minutes, watermark, minutes, watermark, minutes, watermark.
WITH minutes AS (
    SELECT generate_series(date_trunc('minute', now()) - make_interval(mins => ? - 1),
                           date_trunc('minute', now()), interval '1 minute') AS minute
), folded AS (
    SELECT minute, received, completed, failed, dead
      FROM inbox_history_minute
     WHERE minute >= date_trunc('minute', now()) - make_interval(mins => ? - 1)
       AND minute < CAST(? AS TIMESTAMPTZ)
), received AS (
    SELECT date_trunc('minute', created_at) AS minute, count(*) AS n
      FROM inbox_message
     WHERE created_at >= greatest(date_trunc('minute', now()) - make_interval(mins => ? - 1), CAST(? AS TIMESTAMPTZ))
     GROUP BY 1
), ended AS (
    SELECT date_trunc('minute', finished_at) AS minute,
           count(*) FILTER (WHERE outcome = 'COMPLETED') AS completed,
           count(*) FILTER (WHERE outcome = 'FAILED') AS failed,
           count(*) FILTER (WHERE outcome = 'DEAD') AS dead
      FROM inbox_attempt
     WHERE finished_at >= greatest(date_trunc('minute', now()) - make_interval(mins => ? - 1), CAST(? AS TIMESTAMPTZ))
     GROUP BY 1
)
SELECT m.minute,
       coalesce(f.received, 0) + coalesce(r.n, 0) AS received,
       coalesce(f.completed, 0) + coalesce(e.completed, 0) AS completed,
       coalesce(f.failed, 0) + coalesce(e.failed, 0) AS failed,
       coalesce(f.dead, 0) + coalesce(e.dead, 0) AS dead
  FROM minutes m
  LEFT JOIN folded f ON f.minute = m.minute
  LEFT JOIN received r ON r.minute = m.minute
  LEFT JOIN ended e ON e.minute = m.minute
 ORDER BY m.minute
