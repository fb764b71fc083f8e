-- The fence before a call the survey side cannot tell from a new request (a submission or a resend: the bundle's
-- create is keyed by srvyDrawupNo, those are not): does this registration still hold its claim, and if so renewed.
-- A stored row's claim is its claim token (updated_at renewed: the worker's sign of life that reset-stuck-rows.sql
-- reads, so the reset cannot take the row while the call runs); a synchronous registration's (the rollback toggle:
-- a message not stored, id above every stored one) is its subject's lease, held by its holder with 10 s or more left
-- (taken again now for its own length, so neither a takeover nor an inbox claim of the subject, claim-row.sql, can come
-- while the call runs). Only one of the two can match: the other finds no row.
-- Run by: routes/inbox-register.camel.yaml, step inbox-register-renew-claim (camel-sql), with :#id, :#token (the
-- claim token, or the lease's holder) and :#srvyDrawupNo.
-- Why: a registration paused past its claim's life (a frozen pod or node, a stop-the-world pause, a partition)
-- between its claim and the call (the payload's read and the resend check, a statement that may wait for a
-- connection and be tried again, lie between them) had its row reset, or its lease taken over, and the subject
-- perhaps registered by another; resumed, it sent the patient the questionnaire again (or the submission twice), and
-- only its fenced outcome record then found the claim gone. No row back: the claim is gone, nothing is sent. A pause
-- between this statement and the call (microseconds of work) that outlasts the claim, or one after the request left,
-- still can.
WITH row_claim AS (
    UPDATE inbox_message
       SET updated_at = now()
     WHERE id = :#id
       AND status = 'PROCESSING'
       AND claim_token = CAST(:#token AS UUID)
    RETURNING id
), lease AS (
    UPDATE synchronous_lease
       -- taken again now for the same length (every SET reads the row as it was)
       SET taken_at = now(),
           expires_at = GREATEST(expires_at, now() + (expires_at - taken_at))
     WHERE srvy_drawup_no = CAST(:#srvyDrawupNo AS TEXT)
       AND holder = CAST(:#token AS TEXT)
       -- with some of it left: an inbox claim (claim-row.sql) reads the lease from its statement's start without a
       -- lock, so a renewal committing across the expiry could let both go ahead
       AND expires_at > now() + INTERVAL '10 seconds'
    RETURNING srvy_drawup_no
)
SELECT id FROM row_claim
UNION ALL
SELECT CAST(:#id AS BIGINT) FROM lease
