-- When the redelivery job last republished a row's event, so a backlog is not republished every tick.
ALTER TABLE inbox_message ADD COLUMN published_at TIMESTAMP WITH TIME ZONE;

-- Every operator action on a row: who, when, what, from which state. Never updated or deleted.
CREATE TABLE operator_audit (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    actor       TEXT   NOT NULL,
    action      TEXT   NOT NULL,
    inbox_id    BIGINT NOT NULL REFERENCES inbox_message (id),
    from_status TEXT   NOT NULL,
    to_status   TEXT   NOT NULL
);
CREATE INDEX operator_audit_inbox_idx ON operator_audit (inbox_id, id);

-- One row per redelivery tick: which instance ran it and what it did (operators: "is the job alive?").
CREATE TABLE redelivery_run (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scheduled_fire_time TIMESTAMP WITH TIME ZONE NOT NULL,
    fired_at            TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    instance            TEXT    NOT NULL,
    scheduler           TEXT    NOT NULL,
    lost_events         INTEGER NOT NULL,
    retries             INTEGER NOT NULL,
    stuck_reset         INTEGER NOT NULL,
    replies             INTEGER NOT NULL
);
CREATE INDEX redelivery_run_fired_idx ON redelivery_run (fired_at);
