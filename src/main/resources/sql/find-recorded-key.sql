-- The row on record for a synchronous registration whose record stored nothing: its own, under the id reserved with
-- its lease and its holder's token (an earlier try of the record committed while its answer was lost, after this
-- try's snapshot), else the row holding its Idempotency-Key (stored meanwhile by a pod still in inbox mode while the
-- toggle rolls out: the sender's retry of this very message, after its first try timed out, reached that pod): the
-- answer carries that id.
-- Such a row, stored after the id this registration reserved and not yet claimed (the lease refuses its claim), is
-- this registration's replay and stands as its record: it is completed here, while the lease still holds, with an
-- attempt saying so (the reserved id stays unused), and the reply the registration's outcome owes (NOTIFY_SKIPPED,
-- ALREADY_SUBMITTED) opened on it, for the redelivery job: its
-- sender was answered "received" and waits for that reply, the synchronous answer having gone to a sender that had
-- given up. Left RECEIVED, it was claimed once the lease was given back and, its subject now having a COMPLETED SEND,
-- registered again as a resend request: the patient notified twice, a SUBMIT submitted twice.
-- Run by: routes/inbox-receive.camel.yaml, step inbox-receive-find-recorded-key (camel-sql), after
-- record-synchronous-registration.sql stored nothing; a statement of its own, so it sees the other commit.
-- Why this WHERE: the primary key and the unique idempotency_key answer it; its own record first. The replay must be
-- the same message (subject and type: a key reused for another message is answered as its first row, as a reception
-- answers it, and left alone).
WITH found AS (
    SELECT id, status
      FROM inbox_message
     WHERE (id = CAST(:#recordId AS BIGINT) AND claim_token = CAST(:#holder AS UUID))
        OR idempotency_key = CAST(:#idempotencyKey AS TEXT)
     ORDER BY id = CAST(:#recordId AS BIGINT) DESC
     LIMIT 1
), replayed AS (
    UPDATE inbox_message m
       SET status = 'COMPLETED',
           attempts = m.attempts + 1,
           held_reason = NULL,
           last_error = NULL,
           last_error_code = NULL,
           last_attempt_at = now(),
           updated_at = now(),
           published_at = COALESCE(m.published_at, now()),
           reply_status = CASE WHEN CAST(:#replyCode AS TEXT) IS NULL THEN m.reply_status ELSE 'PENDING' END,
           reply_reason_code = COALESCE(CAST(:#replyCode AS TEXT), m.reply_reason_code),
           reply_reason = COALESCE(CAST(:#replyReason AS TEXT), m.reply_reason),
           reply_updated_at = CASE WHEN CAST(:#replyCode AS TEXT) IS NULL THEN m.reply_updated_at ELSE now() END,
           reply_last_error = CASE WHEN CAST(:#replyCode AS TEXT) IS NULL THEN m.reply_last_error ELSE NULL END
      FROM found f
     WHERE m.id = f.id
       AND f.id > CAST(:#recordId AS BIGINT)
       AND m.status = 'RECEIVED'
       AND m.srvy_drawup_no = CAST(:#srvyDrawupNo AS TEXT)
       AND m.msg_type = CAST(:#msgType AS TEXT)
    RETURNING m.id, m.attempts
), attempt AS (
    INSERT INTO inbox_attempt (inbox_id, attempt_no, started_at, finished_at, outcome, reason)
    SELECT id, attempts, now(), now(), 'COMPLETED', 'the sender''s retry of a synchronous registration (id '
           || CAST(:#recordId AS BIGINT) || ' reserved for its record, not used): registered there, this row is its record'
      FROM replayed
)
SELECT id
  FROM found
