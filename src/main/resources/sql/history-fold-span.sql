-- The minutes the next fold counts (V14): from the first one not folded yet, up to the minute that ended 2 minutes
-- ago (later ones may still gain rows), an hour at most (a first fold after a day of downtime stays a short
-- statement whatever a burst put in that hour: a day is folded in 24 ticks). Nothing older than the longest chart
-- (1,440 minutes) is counted.
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-history-span; read-only.
SELECT greatest(folded_until, date_trunc('minute', now()) - INTERVAL '1440 minutes') AS lo,
       least(greatest(folded_until, date_trunc('minute', now()) - INTERVAL '1440 minutes') + INTERVAL '1 hour',
             date_trunc('minute', now()) - INTERVAL '2 minutes') AS hi,
       folded_until AS was
  FROM inbox_history_folded
