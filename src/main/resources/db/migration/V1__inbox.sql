-- The inbox: one row per received legacy message. The payload is opaque to storage (the body exactly
-- as received); everything the state machine needs is a normalized column.
CREATE TABLE inbox_message (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    srvy_drawup_no    TEXT        NOT NULL,
    msg_type          TEXT        NOT NULL CHECK (msg_type IN ('SEND', 'SUBMIT')),
    payload           BYTEA,
    idempotency_key   TEXT        UNIQUE,
    status            TEXT        NOT NULL DEFAULT 'RECEIVED'
                      CHECK (status IN ('RECEIVED', 'PROCESSING', 'COMPLETED', 'FAILED', 'DEAD')),
    attempts          INTEGER     NOT NULL DEFAULT 0,
    last_error        TEXT,
    held_reason       TEXT,
    claim_token       UUID,
    reply_status      TEXT        NOT NULL DEFAULT 'NONE'
                      CHECK (reply_status IN ('NONE', 'PENDING', 'SENDING', 'SENT', 'FAILED')),
    reply_reason_code TEXT,
    reply_reason      TEXT,
    reply_attempts    INTEGER     NOT NULL DEFAULT 0,
    reply_last_error  TEXT,
    reply_updated_at  TIMESTAMP WITH TIME ZONE,
    created_at        TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at        TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    last_attempt_at   TIMESTAMP WITH TIME ZONE
);

-- Ordering guard: "is there an earlier unfinished row of this subject?" (claim) and the successor lookup.
CREATE INDEX inbox_message_unfinished_subject_idx
    ON inbox_message (srvy_drawup_no, id)
    WHERE status IN ('RECEIVED', 'PROCESSING', 'FAILED');

-- Resend detection: "has this subject a COMPLETED SEND?"
CREATE INDEX inbox_message_completed_send_idx
    ON inbox_message (srvy_drawup_no)
    WHERE status = 'COMPLETED' AND msg_type = 'SEND';

-- Redelivery: lost events (RECEIVED by age), retries (FAILED by last attempt), stuck workers (PROCESSING by update).
CREATE INDEX inbox_message_received_idx   ON inbox_message (created_at)      WHERE status = 'RECEIVED';
CREATE INDEX inbox_message_failed_idx     ON inbox_message (last_attempt_at) WHERE status = 'FAILED';
CREATE INDEX inbox_message_processing_idx ON inbox_message (updated_at)      WHERE status = 'PROCESSING';
-- Replies owed to the legacy system.
CREATE INDEX inbox_message_reply_idx      ON inbox_message (reply_updated_at)
    WHERE reply_status IN ('PENDING', 'SENDING', 'FAILED');
-- Operator listing: newest first, optionally by status.
CREATE INDEX inbox_message_status_id_idx  ON inbox_message (status, id DESC);

-- One row per processing attempt: when it started and ended, and how.
-- attempt_no restarts at 1 after an operator requeue, hence the surrogate key.
CREATE TABLE inbox_attempt (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    inbox_id    BIGINT  NOT NULL REFERENCES inbox_message (id),
    attempt_no  INTEGER NOT NULL,
    started_at  TIMESTAMP WITH TIME ZONE NOT NULL,
    finished_at TIMESTAMP WITH TIME ZONE,
    outcome     TEXT,
    reason      TEXT
);
CREATE INDEX inbox_attempt_inbox_idx ON inbox_attempt (inbox_id, id);
