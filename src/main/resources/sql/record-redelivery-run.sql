-- One row per redelivery tick (which instance ran which fire time, and what it did), and the history
-- older than redeliver-history-days removed, in one statement.
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-record-run (camel-sql).
-- Why this WHERE: the prune works on fired_at (the database clock at insert), so clocks of instances
-- never matter.
WITH pruned AS (
    DELETE FROM redelivery_run
     WHERE fired_at < now() - :#historyDays * INTERVAL '1 day'
)
INSERT INTO redelivery_run (scheduled_fire_time, instance, scheduler, lost_events, retries, stuck_reset, replies)
VALUES (:#scheduled, :#instance, :#scheduler, :#lost, :#retries, :#stuck, :#replies)
