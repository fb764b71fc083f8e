-- The minutes the next fold counts (V14): from the first one not folded yet, up to the minute that ended 2 minutes
-- ago and not past the start of any transaction still open in this database (rows and attempts carry their
-- transaction's start as created_at / finished_at: an insert whose COMMIT still waits, on a synchronous standby
-- say, lands in a minute not folded yet), an hour at most (a first fold after a day of downtime stays a short
-- statement whatever a burst put in that hour: a day is folded in 24 ticks). Nothing older than the longest chart
-- (1,440 minutes) is counted. Whole minutes, whatever an operator wrote into the watermark; one in the future (a
-- typo, a clock jump) counts the last day again instead of stopping the chart.
-- Sessions of other database roles show no xact_start (pg_stat_activity) and are not waited for: the service's
-- pods share one role. Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-chart-span; read-only.
WITH watermark AS (
    SELECT folded_until AS was,
           CASE WHEN folded_until > now() THEN date_trunc('minute', now()) - INTERVAL '1440 minutes'
                ELSE greatest(date_trunc('minute', folded_until), date_trunc('minute', now()) - INTERVAL '1440 minutes')
           END AS lo
      FROM inbox_history_folded
), oldest_open AS (
    SELECT date_trunc('minute', min(xact_start)) AS minute
      FROM pg_stat_activity
     WHERE datname = current_database()
       AND backend_type = 'client backend'
       AND pid <> pg_backend_pid()
       AND xact_start IS NOT NULL
)
SELECT w.lo,
       greatest(w.lo, least(w.lo + INTERVAL '1 hour',
                            date_trunc('minute', now()) - INTERVAL '2 minutes',
                            coalesce(o.minute, 'infinity'))) AS hi,
       w.was
  FROM watermark w, oldest_open o
