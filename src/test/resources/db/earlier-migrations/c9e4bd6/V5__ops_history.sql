-- The operator console's chart (GET /ops/inbox/history): rows received and attempts ended per minute over
-- the last hour. Both read a recent time range; without these they scan the whole tables.
CREATE INDEX inbox_message_created_idx ON inbox_message (created_at);
CREATE INDEX inbox_attempt_finished_idx ON inbox_attempt (finished_at) WHERE finished_at IS NOT NULL;
