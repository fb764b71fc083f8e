-- The W3C trace context a message was received in (traceparent: version-traceid-spanid-flags), so every
-- event of the row (first publish, redelivery, requeue, a held successor) carries it and the worker continues
-- the reception's trace. Nullable, no default: PostgreSQL adds the column without rewriting the table.
ALTER TABLE inbox_message ADD COLUMN trace_parent text;
