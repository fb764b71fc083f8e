-- The owed replies by status, then by age (find-owed-replies.sql takes the never-tried PENDING ones first, then the
-- FAILED ones due): on V1's reply index (every owed reply by age, the status not in it) the PENDING branch read and
-- skipped every FAILED reply older than the first PENDING one, each from the table, every tick; the replies the legacy
-- system keeps refusing pile up for years. CONCURRENTLY, outside a transaction (V22__reply_due_index.sql.conf), as V10.
SET lock_timeout = 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_message_reply_due_idx ON inbox_message (reply_status, reply_updated_at)
    WHERE reply_status IN ('PENDING', 'FAILED');
RESET lock_timeout;
