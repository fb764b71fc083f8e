-- What the synchronous path (rollback toggle) registered stays on record: a COMPLETED row with its one attempt,
-- so a later SEND of the subject — synchronous or through the inbox — is recognised as a resend request
-- (has-completed-send.sql), the operator API and the counts show it, and its Idempotency-Key is known.
-- Run by: routes/inbox-receive.camel.yaml, step inbox-receive-record-synchronous (camel-sql), once the
-- registration succeeded.
-- Why this shape: no payload is kept (nothing is owed on the row, so no patient data stays: redacted_at is
-- now); no reply is owed: a reply the outcome carried (NOTIFY_SKIPPED, ALREADY_SUBMITTED) went out in the
-- answer, so it is recorded SENT with its code (its text, as for a redacted row, is not kept: it may name a
-- patient a mask cannot know), for operators and so that nothing ever sends it again;
-- published_at is set, so no job ever republishes it. Its id is the one reserved with the lease
-- (claim-synchronous-registration.sql: under the subject's reception lock), so a SEND an inbox-mode pod stored while
-- this registration ran has a later id and sees this record before it (a resend); the subject's advisory lock (its key
-- space InboxStore.SUBJECT_LOCK_SPACE, passed in as lockSpace) is taken as a reception's is. A key already on record
-- stores nothing (ON CONFLICT), nor does the reserved id already taken by this registration's earlier try.
-- Fenced by the registration's holder id (its lease's, kept as the row's claim_token): the statement tried again after
-- its COMMIT went through and its answer was lost (inbox-receive-record-errors) finds its own row and returns it,
-- instead of recording the registration a second time (without an Idempotency-Key nothing else conflicts).
-- Returns the record's id, the answer's inboxId (no row when nothing was stored).
WITH earlier AS (
    SELECT id
      FROM inbox_message
     WHERE srvy_drawup_no = CAST(:#srvyDrawupNo AS TEXT)
       AND claim_token = CAST(:#holder AS UUID)
), recorded AS (
    INSERT INTO inbox_message (id, srvy_drawup_no, msg_type, payload, idempotency_key, status, attempts, claim_token,
                               last_attempt_at, published_at, redacted_at,
                               reply_status, reply_reason_code, reply_reason, reply_updated_at)
    OVERRIDING SYSTEM VALUE
    SELECT CAST(:#recordId AS BIGINT), CAST(:#srvyDrawupNo AS TEXT), CAST(:#msgType AS TEXT), NULL, CAST(:#idempotencyKey AS TEXT),
           'COMPLETED', 1, CAST(:#holder AS UUID), now(), now(), now(),
           CASE WHEN CAST(:#replyCode AS TEXT) IS NULL THEN 'NONE' ELSE 'SENT' END,
           CAST(:#replyCode AS TEXT),
           CASE WHEN CAST(:#replyReason AS TEXT) IS NULL THEN NULL ELSE '(removed with the payload)' END,
           CASE WHEN CAST(:#replyCode AS TEXT) IS NULL THEN NULL ELSE now() END
      FROM (SELECT pg_advisory_xact_lock(CAST(:#lockSpace AS INTEGER), hashtext(CAST(:#srvyDrawupNo AS TEXT)))) AS subject_lock
     WHERE NOT EXISTS (SELECT 1 FROM earlier)
    -- any unique: the key, and the reserved id (a try after a lost answer whose snapshot predates the first try's
    -- commit, which it waited for on the subject's lock, finds the id taken: nothing stored, find-recorded-key.sql
    -- reads it; a 23505 made it count as unrecorded)
    ON CONFLICT DO NOTHING
    RETURNING id
), attempt AS (
    INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, finished_at, outcome)
    SELECT id, 1, now(), now(), 'COMPLETED'
      FROM recorded
    RETURNING inbox_id
)
SELECT inbox_id
  FROM attempt
 UNION ALL
SELECT id
  FROM earlier
