-- The console's chart (GET /ops/inbox/history) from counts per minute kept as time passes (issue 22), instead of
-- counting every row received and attempt ended in the window on each call: that cost followed the traffic of the
-- window (a day at 100,000 messages is 100,000 rows and more attempts) and, at 10 million rows, read the heap for
-- each recent entry (pages not yet all-visible: 13,000 heap fetches, 68 ms for the last hour; bench/MEASURED.md).
--   * inbox_history_minute: one row per minute (0s included) that ended at least 2 minutes ago, counted once by the
--     redelivery job (sql/history-fold-span.sql, then sql/fold-history-minutes.sql, each tick), kept for the
--     longest chart (1,440 minutes, InboxOpsController.MAX_HISTORY_MINUTES) and dropped after;
--   * inbox_history_folded.folded_until: the first minute not folded yet. The chart reads the folded minutes before
--     it and counts the rows from it on (sql/history-per-minute.sql), so it is exact whether or not the job has run.
-- Why 2 minutes: a row's created_at and an attempt's finished_at are the database's now() when their transaction
-- began; no path of the service holds a transaction that long (statement bounds 3 s / 3.5 s), so a minute folded
-- later than that never gains a row. Folded counts stay when retention deletes the rows (they are what happened).
CREATE TABLE inbox_history_minute (
    minute    TIMESTAMP WITH TIME ZONE PRIMARY KEY,
    received  BIGINT NOT NULL,
    completed BIGINT NOT NULL,
    failed    BIGINT NOT NULL,
    dead      BIGINT NOT NULL
);

CREATE TABLE inbox_history_folded (
    only_row     BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    folded_until TIMESTAMP WITH TIME ZONE NOT NULL
);

-- nothing folded: the first ticks fold the last day from the rows, an hour a tick
INSERT INTO inbox_history_folded (folded_until) VALUES (date_trunc('minute', now()) - INTERVAL '1440 minutes');
