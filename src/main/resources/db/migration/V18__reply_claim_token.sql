-- The token of the sender holding a row's reply (claim-reply.sql), kept for as long as it is SENDING. A claim whose
-- COMMIT went through while its answer was lost (the connection dropped) is tried again by the route's database
-- redelivery with the same token and finds the reply its own; without it the retry found the reply SENDING, sent
-- nothing, and the reply waited for stuck-processing-after (15 minutes) with nothing logged.
-- No default: PostgreSQL adds the column without rewriting the table. The ALTER still needs the table's exclusive
-- lock for an instant; as in V12 and V15 it waits at most 50 ms per try and tries again, so receptions are never
-- queued behind it for long.
DO $$
BEGIN
    FOR try IN 1..480 LOOP
        BEGIN
            PERFORM set_config('lock_timeout', '50ms', true);
            ALTER TABLE inbox_message ADD COLUMN IF NOT EXISTS reply_claim_token uuid;
            PERFORM set_config('lock_timeout', '0', true);
            RETURN;
        EXCEPTION WHEN lock_not_available THEN
            PERFORM pg_sleep(0.2);
        END;
    END LOOP;
    RAISE EXCEPTION 'inbox_message stayed locked for 2 minutes: reply_claim_token not added';
END $$;
