-- The downstream's code of the last business error (e.g. PATIENT_NOT_FOUND), beside its text in last_error,
-- so an operator's bulk requeue can select the rows that failed for one reason (POST /ops/inbox/requeue,
-- lastErrorCode); null for a system error, a deferral or a row without an error. Only identifiers are kept
-- (Outcome.loggableCode: a code that is not one, or could hold a patient's number, is only named).
-- Nullable, no default: PostgreSQL adds the column without rewriting the table.
ALTER TABLE inbox_message ADD COLUMN last_error_code text;
