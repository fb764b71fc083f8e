-- flyway:executeInTransaction=false
-- The operator console's chart (GET /ops/inbox/history): rows received and attempts ended per minute over
-- the last hour. Both read a recent time range; without these they scan the whole tables.
-- CONCURRENTLY, outside a transaction: on a table of millions of rows a plain CREATE INDEX holds a lock that
-- blocks every insert (every reception) until the build ends. IF NOT EXISTS, so a start that follows one cut
-- short finishes the job (an INVALID index a cut build leaves is dropped first: config/FlywayConnection).
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_message_created_idx ON inbox_message (created_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_attempt_finished_idx ON inbox_attempt (finished_at) WHERE finished_at IS NOT NULL;
