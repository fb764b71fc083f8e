-- The requeued rows waiting for a worker, by the time they were requeued (InboxRowRepository.oldestPendingAgeSeconds
-- reads its first entry; the rows that arrived RECEIVED keep being read through V1's created_at index). Only rows
-- requeued from DEAD enter it: a reception's insert has no entry to write. CONCURRENTLY, outside a transaction
-- (V24__pending_since_index.sql.conf), as V10 and V22.
SET lock_timeout = 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_message_requeued_received_idx ON inbox_message (pending_since)
    WHERE status = 'RECEIVED' AND pending_since IS NOT NULL;
RESET lock_timeout;
