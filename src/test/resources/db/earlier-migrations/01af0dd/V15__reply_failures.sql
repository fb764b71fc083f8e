-- Failed tries of the reply a row owes now: the exponent of that reply's backoff (find-owed-replies.sql).
-- reply_attempts cannot be it: it counts every try of every reply the row ever owed (a DEAD reply, then after a
-- requeue a NOTIFY_SKIPPED one) and is the senders' fence, so it never goes back. claim-reply.sql sets this to 0
-- when it takes a reply never tried since it was opened (PENDING), mark-reply-failed.sql raises it (not for a
-- wait while the legacy circuit is open: nothing was sent), reset-stuck-replies.sql sets it to 0 (a lost sender
-- says nothing about the legacy side).
-- A constant default: PostgreSQL adds the column without rewriting the table. The ALTER still needs the table's
-- exclusive lock for an instant; as in V12 it waits at most 50 ms per try and tries again, so receptions are
-- never queued behind it for long.
DO $$
BEGIN
    FOR try IN 1..480 LOOP
        BEGIN
            PERFORM set_config('lock_timeout', '50ms', true);
            ALTER TABLE inbox_message ADD COLUMN IF NOT EXISTS reply_failures integer NOT NULL DEFAULT 0;
            PERFORM set_config('lock_timeout', '0', true);
            RETURN;
        EXCEPTION WHEN lock_not_available THEN
            PERFORM pg_sleep(0.2);
        END;
    END LOOP;
    RAISE EXCEPTION 'inbox_message stayed locked for 2 minutes: reply_failures not added';
END $$;
