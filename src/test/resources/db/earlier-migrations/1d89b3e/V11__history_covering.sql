-- The console's chart over its longest range (GET /ops/inbox/history?minutes=1440) counts a whole day of attempts
-- by outcome: with outcome only in the heap, each of a day's attempts (100,000 a day at a busy hospital) cost a
-- heap visit, scattered over the table (bench/results/BIGTABLE.md). Carrying the outcome in the index lets the
-- count read the index alone (index-only scan, pages all-visible after vacuum). The received side already reads
-- inbox_message_created_idx alone (it needs created_at only).
-- CONCURRENTLY, outside a transaction (V11__history_covering.sql.conf), as V5: the new index is built before the
-- old one is dropped, so the chart never falls back to a scan.
SET lock_timeout = 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_attempt_finished_outcome_idx ON inbox_attempt (finished_at) INCLUDE (outcome)
    WHERE finished_at IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS inbox_attempt_finished_idx;
RESET lock_timeout;
