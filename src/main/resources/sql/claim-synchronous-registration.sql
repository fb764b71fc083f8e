-- Whether a message may be registered synchronously (the rollback toggle) and, if so, its subject's lease
-- (V17__synchronous_leases.sql), in one statement: nothing of the subject unfinished in the inbox (else the message
-- joins its rows, so a SUBMIT can never overtake its SEND), its Idempotency-Key not on record (else a replay, answered
-- with its first row), and no other registration of the subject running now (the lease: a new row, or the row of a
-- holder gone for longer than a registration can last). The checks and the take are one statement, so a retry
-- cannot pass the key check, wait while the first is recorded and released, and take the lease after it — except in
-- one instant: the checks read the snapshot of this statement's start, the lease its latest state, so a statement
-- that starts before the first's record commits can reach the lease after its release; the route reads the key
-- again once the lease is held (find-key-on-record.sql, a statement of its own) and answers that one as a replay.
-- Run by: routes/inbox-receive.camel.yaml, step inbox-receive-claim-synchronous (camel-sql), before a synchronous
-- registration's first call.
-- The record's id is reserved with the lease (record_id), under the subject's reception lock (InboxStore's, passed
-- in as lockSpace) so that it follows every id a reception of the subject took before it: an inbox-mode pod (the
-- toggle rolling out) storing a SEND of the subject while this one registers stores it with a later id, and its
-- registration then sees this one on record before it (a resend). A reception that took its id before the lock was
-- granted committed before it: the route's next statement (find-key-on-record.sql) sees that row, and the message
-- joins the inbox behind it. Taken at record time instead, the record's id came after that SEND's: registered as a
-- first SEND (the bundle existing: nothing sent), the resend was lost.
-- Returns one row: holder (this registration's when the lease was taken, else null), record_id (with the holder),
-- unfinished, known, and
-- refused_resend: the key's row is a resend the survey side refused (ALREADY_SUBMITTED), so a replay of it is answered
-- with that outcome, 200 N like the first answer, not as a stored message (200 Y: the sender took a refused
-- resend for one that went out).
WITH checks AS (
    SELECT EXISTS (SELECT 1
                     FROM inbox_message
                    WHERE srvy_drawup_no = :#srvyDrawupNo
                      AND status IN ('RECEIVED', 'PROCESSING', 'FAILED')) AS unfinished,
           EXISTS (SELECT 1
                     FROM inbox_message
                    WHERE idempotency_key = CAST(:#idempotencyKey AS TEXT)) AS known,
           EXISTS (SELECT 1
                     FROM inbox_message
                    WHERE idempotency_key = CAST(:#idempotencyKey AS TEXT)
                      AND status = 'COMPLETED'
                      AND reply_reason_code = 'ALREADY_SUBMITTED') AS refused_resend
), taken AS (
    INSERT INTO synchronous_lease (srvy_drawup_no, holder, taken_at, expires_at)
    SELECT CAST(:#srvyDrawupNo AS TEXT), CAST(:#holder AS TEXT), now(), now() + :#expireAfterMillis * INTERVAL '1 millisecond'
      FROM checks
     WHERE NOT checks.unfinished
       AND NOT checks.known
    ON CONFLICT (srvy_drawup_no) DO UPDATE
       SET holder = EXCLUDED.holder,
           taken_at = now(),
           expires_at = EXCLUDED.expires_at
     -- the holder's own expiry (V20), from its own bounds: a pod whose timeouts are shorter (a configuration roll)
     -- must not take a lease whose registration may still run. A lease an older version took has none, or the expiry
     -- of the holder before it (an older version taking over writes holder and taken_at only): never before its age
     -- by this pod's bound either
     WHERE GREATEST(COALESCE(synchronous_lease.expires_at, '-infinity'),
                    synchronous_lease.taken_at + :#expireAfterMillis * INTERVAL '1 millisecond') < now()
    -- the subject's lock once the lease is taken (after its row: nothing takes the two the other way round), the id
    -- then
    RETURNING holder,
              (SELECT nextval(pg_get_serial_sequence('inbox_message', 'id'))
                 FROM (SELECT pg_advisory_xact_lock(CAST(:#lockSpace AS INTEGER),
                                                    hashtext(CAST(:#srvyDrawupNo AS TEXT)))) AS subject_lock) AS record_id
)
SELECT (SELECT holder FROM taken) AS holder,
       (SELECT record_id FROM taken) AS record_id,
       checks.unfinished,
       checks.known,
       checks.refused_resend
  FROM checks
