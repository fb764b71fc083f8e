-- Since when a row owes work again after it was closed: a requeue of a DEAD row sets it (sql/requeue-row.sql); NULL
-- for every other row, which owes work since it arrived (created_at). The backlog's age (the gauge
-- adapter_inbox_oldest_pending_age_seconds, oldestPendingAgeSeconds of GET /ops/inbox/stats, the critical alert
-- SurveyInboxBacklogNotDraining) read created_at alone: a month-old DEAD row requeued read a month old, and paged as
-- a backlog not draining while it went through its retries again. Nullable, no default: PostgreSQL adds the column
-- without rewriting the table; a pod of an earlier release neither reads nor writes it (its requeue leaves the
-- value of an earlier requeue, or none: the row's age reads from then, or from its arrival, as before).
ALTER TABLE inbox_message ADD COLUMN IF NOT EXISTS pending_since TIMESTAMP WITH TIME ZONE;
