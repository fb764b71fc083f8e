-- Since when a row owes work again after it was closed: a requeue of a DEAD row sets it (sql/requeue-row.sql); NULL
-- for every other row, which owes work since it arrived (created_at). The backlog's age (the gauge
-- adapter_inbox_oldest_pending_age_seconds, oldestPendingAgeSeconds of GET /ops/inbox/stats, the critical alert
-- SurveyInboxBacklogNotDraining) read created_at alone: a month-old DEAD row requeued read a month old, and paged as
-- a backlog not draining while it went through its retries again. A pod of an earlier release neither reads nor
-- writes it (its requeue leaves the value of an earlier requeue, or none: the row's age reads from then, or from its
-- arrival, as before).
-- No default: PostgreSQL adds the column without rewriting the table. The ALTER still needs the table's exclusive
-- lock for an instant; as in V12, V15 and V18 it waits at most 50 ms per try and tries again, so receptions are never
-- queued behind it for long; 25 s in all, within the startup probe's budget beside the others (its first text,
-- 7d2d10c, waited up to Flyway's 5 s lock_timeout with every reception queued behind it, and failed the start
-- behind a longer transaction).
DO $$
BEGIN
    FOR try IN 1..100 LOOP
        BEGIN
            PERFORM set_config('lock_timeout', '50ms', true);
            ALTER TABLE inbox_message ADD COLUMN IF NOT EXISTS pending_since TIMESTAMP WITH TIME ZONE;
            PERFORM set_config('lock_timeout', '0', true);
            RETURN;
        EXCEPTION WHEN lock_not_available THEN
            PERFORM pg_sleep(0.2);
        END;
    END LOOP;
    RAISE EXCEPTION 'inbox_message stayed locked for 25 seconds: pending_since not added (the next start tries again)';
END $$;
