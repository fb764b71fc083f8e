-- Folds up to 5,000 count deltas of finished rows (V8) into their totals, so inbox_status_counts() sums only the
-- deltas not yet folded (a tick's worth, or a backlog's rest); answers how many it folded and whether that was a
-- full batch (more: the batch size is written here only). The redelivery job's route inbox-redeliver-counts runs it
-- up to 8 times a tick while a run says more (40,000 a tick, 667 a second at the default minute),
-- each run its own autocommit statement, and catches a failure so the tick goes on. With the redelivery job off
-- on every instance, deltas accumulate: the counts stay exact, each read sums more of them.
-- Why this shape: the oldest 5,000 ids through the primary key (ORDER BY id LIMIT: an index scan whatever the
-- statistics say), then one range delete up to the last of them. The earlier "id IN (SELECT ... FOR UPDATE SKIP
-- LOCKED)" was planned from the table's statistics, and a queue table that is empty at every autovacuum keeps
-- reltuples = 0: the planner then expects one row and nests the locking subquery inside a loop over the table,
-- rescanning it once per delta (12,001 x 5,000 rows: cancelled at 3.5 s in the route kit; 100,000 after a bulk
-- update: the big-table benchmark's fold "on CPU" for half a minute). A range holds no such trap. A delta still
-- uncommitted when this runs is not visible to it and is folded by a later run; a second fold at the same
-- moment waits for this one's commit and finds those rows gone.
WITH batch AS (
    SELECT max(id) AS last FROM (SELECT id FROM inbox_status_delta ORDER BY id LIMIT 5000) oldest
), folded AS (
    DELETE FROM inbox_status_delta WHERE id <= (SELECT last FROM batch)
    RETURNING status, delta
), sums AS (
    SELECT status, sum(delta) AS delta FROM folded GROUP BY status
), totals AS (
    UPDATE inbox_status_total t SET total = t.total + s.delta FROM sums s WHERE t.status = s.status
)
SELECT count(*) AS folded, count(*) >= 5000 AS more FROM folded
