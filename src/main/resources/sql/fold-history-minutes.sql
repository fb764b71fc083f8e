-- Counts the minutes [lo, hi) of the console's chart (V14) once: rows received, attempts ended COMPLETED / FAILED /
-- DEAD, per minute, into inbox_history_minute; moves the watermark to hi; drops minutes older than the longest chart.
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-chart-fold, with the span that
-- sql/history-fold-span.sql read (lo, hi, was); one statement, autocommit.
-- Why this WHERE: the ranges are the span's own values (the planner sees them and reads the time indexes of V5/V11
-- for those minutes only); the watermark moves only if nobody moved it since the span was read (a fold run twice
-- for the same span writes the same counts: replaced, never added; a span folded again after the watermark was
-- moved back is counted again from the rows there are). An empty span (hi <= lo) changes nothing.
WITH per_event AS (
    SELECT date_trunc('minute', created_at) AS minute, 1 AS received, 0 AS completed, 0 AS failed, 0 AS dead
      FROM inbox_message
     WHERE created_at >= CAST(:#lo AS TIMESTAMPTZ)
       AND created_at < CAST(:#hi AS TIMESTAMPTZ)
    UNION ALL
    SELECT date_trunc('minute', finished_at), 0,
           CASE WHEN outcome = 'COMPLETED' THEN 1 ELSE 0 END,
           CASE WHEN outcome = 'FAILED' THEN 1 ELSE 0 END,
           CASE WHEN outcome = 'DEAD' THEN 1 ELSE 0 END
      FROM inbox_attempt
     WHERE finished_at >= CAST(:#lo AS TIMESTAMPTZ)
       AND finished_at < CAST(:#hi AS TIMESTAMPTZ)
), counted AS (
    -- every minute of the span, the quiet ones as 0: a span folded again is replaced whole
    SELECT span.minute,
           coalesce(sum(e.received), 0) AS received,
           coalesce(sum(e.completed), 0) AS completed,
           coalesce(sum(e.failed), 0) AS failed,
           coalesce(sum(e.dead), 0) AS dead
      FROM generate_series(CAST(:#lo AS TIMESTAMPTZ), CAST(:#hi AS TIMESTAMPTZ) - INTERVAL '1 minute', INTERVAL '1 minute') AS span (minute)
      LEFT JOIN per_event e ON e.minute = span.minute
     GROUP BY span.minute
), stored AS (
    INSERT INTO inbox_history_minute (minute, received, completed, failed, dead)
    SELECT minute, received, completed, failed, dead
      FROM counted
    ON CONFLICT (minute) DO UPDATE
       SET received = EXCLUDED.received,
           completed = EXCLUDED.completed,
           failed = EXCLUDED.failed,
           dead = EXCLUDED.dead
), dropped AS (
    DELETE FROM inbox_history_minute
     WHERE minute < date_trunc('minute', now()) - INTERVAL '1440 minutes'
)
UPDATE inbox_history_folded
   SET folded_until = CAST(:#hi AS TIMESTAMPTZ)
 WHERE folded_until = CAST(:#was AS TIMESTAMPTZ)
   AND CAST(:#hi AS TIMESTAMPTZ) > CAST(:#lo AS TIMESTAMPTZ)
