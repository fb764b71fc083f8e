-- Encryption at rest: the key that encrypted this row's payload (NULL = stored in clear). Keys rotate
-- by changing the active key; old rows keep naming theirs, so nothing is rewritten.
ALTER TABLE inbox_message ADD COLUMN payload_key_id TEXT;
-- Retention: when the payload of a closed row was removed (metadata and history stay).
ALTER TABLE inbox_message ADD COLUMN redacted_at TIMESTAMP WITH TIME ZONE;

-- Retention sweep: closed rows by age, not yet redacted.
CREATE INDEX inbox_message_retention_idx ON inbox_message (status, updated_at)
    WHERE status IN ('COMPLETED', 'DEAD') AND redacted_at IS NULL;
