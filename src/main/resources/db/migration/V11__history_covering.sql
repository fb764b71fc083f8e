-- The console's chart over its longest range (GET /ops/inbox/history?minutes=1440) counts a whole day of attempts
-- by outcome. With the outcome in the index, pages that vacuum has marked all-visible are counted from the index
-- alone; the most recent ones (attempts are inserted, then updated when they end) are still visited, and they are
-- few and contiguous. Not partial (unlike V5's): the planner reads the current end of a complete index to
-- estimate "finished in the last minutes", instead of statistics that can be days old.
-- CONCURRENTLY, outside a transaction (V11__history_covering.sql.conf), as V5: the new index is built before the
-- old one is dropped, so the chart never falls back to a scan. On 10 million attempts the build takes about a
-- minute, within the startup probe's 180 s.
SET lock_timeout = 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_attempt_finished_outcome_idx ON inbox_attempt (finished_at) INCLUDE (outcome);
DROP INDEX CONCURRENTLY IF EXISTS inbox_attempt_finished_idx;
RESET lock_timeout;
