-- The downstream's code of the last business error (e.g. PATIENT_NOT_FOUND), beside its text in last_error,
-- so an operator's bulk requeue can select the rows that failed for one reason (POST /ops/inbox/requeue,
-- lastErrorCode); null for a system error, a deferral or a row without an error. Only identifiers are kept
-- (Outcome.loggableCode: a code that is not one, or could hold a patient's number, is only named).
-- Nullable, no default: PostgreSQL adds the column without rewriting the table. The ALTER still needs the
-- table's exclusive lock for an instant, and while it waits for that lock (behind an autovacuum of the table,
-- say, which yields only after deadlock_timeout) every insert queues behind it: so it waits at most 50 ms per
-- try and tries again, and receptions are held up by at most that (MigrationOnBigTableTest: an insert took
-- 857 ms while a plain ALTER waited).
DO $$
BEGIN
    FOR try IN 1..1200 LOOP
        BEGIN
            PERFORM set_config('lock_timeout', '50ms', true);
            ALTER TABLE inbox_message ADD COLUMN IF NOT EXISTS last_error_code text;
            PERFORM set_config('lock_timeout', '0', true);
            RETURN;
        EXCEPTION WHEN lock_not_available THEN
            PERFORM pg_sleep(0.2);
        END;
    END LOOP;
    RAISE EXCEPTION 'inbox_message stayed locked for 5 minutes: last_error_code not added';
END $$;
