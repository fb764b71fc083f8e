-- The fence before a call the survey side cannot tell from a new request (a submission or a resend: the bundle's
-- create is keyed by srvyDrawupNo, those are not): is this worker's claim still the row's, and if so renewed
-- (updated_at, the worker's sign of life that reset-stuck-rows.sql reads), so the reset cannot take the row while the
-- call runs.
-- Run by: routes/inbox-register.camel.yaml, step inbox-register-renew-claim (camel-sql), with :#id and :#token,
-- on a claimed row only (the synchronous path has no claim: its lease bounds it).
-- Why: a worker paused past stuck-processing-after (a frozen pod or node, a stop-the-world pause, a partition)
-- between its claim and the call (the payload's read and the resend check, a statement that may wait for a
-- connection and be tried again, lie between them) had its row reset and perhaps registered by another worker;
-- resumed, it sent the patient the questionnaire again (or the submission twice), and only its fenced outcome record
-- then found the claim gone. No row back: the claim is gone, nothing is sent. A pause between this statement and the
-- call (microseconds of work) that outlasts stuck-processing-after, or one after the request left, still can.
UPDATE inbox_message
   SET updated_at = now()
 WHERE id = :#id
   AND status = 'PROCESSING'
   AND claim_token = CAST(:#token AS UUID)
RETURNING id
