-- Retention: removes the payload of COMPLETED rows closed longer than adapter.retention.completed and DEAD rows
-- closed longer than adapter.retention.dead, and with it the texts downstreams wrote about the row (last_error,
-- each attempt's reason, a reply reason no longer owed): masked when stored, but a mask finds the row's own values
-- and the shapes of personal data, not another patient a downstream named, so they go with the payload. Codes,
-- statuses, counts and times stay (the history chart, the audit). Returns the status of each redacted row (for
-- the counts).
-- Run by: routes/inbox-retention.camel.yaml, step inbox-retention-redact (camel-sql), in a loop while
-- a whole batch came back.
-- Why this WHERE: RECEIVED, PROCESSING and FAILED rows are never touched, whatever their age: their
-- payload is still needed. updated_at is when the row closed. A bounded batch with SKIP LOCKED keeps
-- a first run over a large table from holding long locks. A reply still owed (PENDING, SENDING, FAILED) keeps its
-- reason: it is the reply's body.
-- The batch is an array taken once (ARRAY(SELECT ... FOR UPDATE SKIP LOCKED)), never a semi-join: with the
-- statistics of a table found empty (reltuples 0 over a page) the planner would nest the locking subquery in a
-- loop over the table and rescan it per row (the count fold took 10.9 s so; JobStatementPlansTest). The attempts
-- are found through inbox_attempt_inbox_idx (inbox_id, id), one data-modifying CTE: one statement, two tables.
WITH redacted AS (
    UPDATE inbox_message
       SET payload = NULL,
           payload_key_id = NULL,
           redacted_at = now(),
           last_error = CASE WHEN last_error IS NULL THEN NULL ELSE '(removed with the payload)' END,
           reply_reason = CASE WHEN reply_reason IS NULL OR reply_status IN ('PENDING', 'SENDING', 'FAILED') THEN reply_reason
                               ELSE '(removed with the payload)' END
     WHERE id = ANY (ARRAY(SELECT id
                              FROM inbox_message
                             WHERE redacted_at IS NULL
                               AND ((status = 'COMPLETED' AND updated_at < now() - :#completedMillis * INTERVAL '1 millisecond')
                                 OR (status = 'DEAD' AND updated_at < now() - :#deadMillis * INTERVAL '1 millisecond'))
                             LIMIT :#batch
                               FOR UPDATE SKIP LOCKED))
    RETURNING id, status
), reasons AS (
    UPDATE inbox_attempt
       SET reason = '(removed with the payload)'
     WHERE inbox_id IN (SELECT id FROM redacted)
       AND reason IS NOT NULL
)
SELECT status
  FROM redacted
