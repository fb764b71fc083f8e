-- Retention: removes the payload (the only column holding patient data) of COMPLETED rows closed
-- longer than adapter.retention.completed and DEAD rows closed longer than adapter.retention.dead.
-- Metadata, attempt history and audit stay. Returns the status of each redacted row (for the counts).
-- Run by: routes/inbox-retention.camel.yaml, step inbox-retention-redact (camel-sql), in a loop while
-- a whole batch came back.
-- Why this WHERE: RECEIVED, PROCESSING and FAILED rows are never touched, whatever their age: their
-- payload is still needed. updated_at is when the row closed. A bounded batch with SKIP LOCKED keeps
-- a first run over a large table from holding long locks.
-- The batch is an array taken once (ARRAY(SELECT ... FOR UPDATE SKIP LOCKED)), never a semi-join: with the
-- statistics of a table found empty (reltuples 0 over a page) the planner would nest the locking subquery in a
-- loop over the table and rescan it per row (the count fold took 10.9 s so; JobStatementPlansTest).
UPDATE inbox_message
   SET payload = NULL,
       payload_key_id = NULL,
       redacted_at = now()
 WHERE id = ANY (ARRAY(SELECT id
                          FROM inbox_message
                         WHERE redacted_at IS NULL
                           AND ((status = 'COMPLETED' AND updated_at < now() - :#completedMillis * INTERVAL '1 millisecond')
                             OR (status = 'DEAD' AND updated_at < now() - :#deadMillis * INTERVAL '1 millisecond'))
                         LIMIT :#batch
                           FOR UPDATE SKIP LOCKED))
RETURNING status
