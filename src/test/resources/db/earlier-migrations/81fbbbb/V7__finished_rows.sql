-- Retention of finished rows (sql/delete-finished-rows.sql): each set it deletes by the time its rows finished,
-- whatever their payload (the V4 index covers only rows not yet redacted). Two indexes, so a batch reads only
-- rows of its own set and never walks past the COMPLETED SENDs that stay longer. A row's operator_audit leaves
-- with the row (V3's "never updated or deleted" holds while the row exists).
-- CONCURRENTLY, outside a transaction (V7__finished_rows.sql.conf), as V5: a plain CREATE INDEX would block
-- every reception on a large table until the build ends; no lock_timeout (it blocks no writer, and it waits for
-- older transactions through ordinary lock waits); an INVALID index a cut build leaves is dropped at the next
-- start (config/FlywayConnection) and IF NOT EXISTS builds it again.
SET lock_timeout = 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_message_finished_other_idx ON inbox_message (updated_at)
    WHERE status = 'DEAD' OR (status = 'COMPLETED' AND msg_type = 'SUBMIT');
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_message_finished_send_idx ON inbox_message (updated_at)
    WHERE status = 'COMPLETED' AND msg_type = 'SEND';
RESET lock_timeout;
