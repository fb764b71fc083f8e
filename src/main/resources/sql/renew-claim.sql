-- The fence before a call the survey side cannot tell from a new request (the resend: the bundle's create is keyed
-- by srvyDrawupNo, a resend is not): is this worker's claim still the row's, and if so renewed (updated_at, the
-- worker's sign of life that reset-stuck-rows.sql reads), so the reset cannot take the row while the call runs.
-- Run by: routes/inbox-register.camel.yaml, step inbox-register-renew-claim (camel-sql), with :#id and :#token,
-- on a claimed row only (the synchronous path has no claim: its lease bounds it).
-- Why: a worker paused past stuck-processing-after (a frozen pod or node, a stop-the-world pause, a partition) had
-- its row reset and perhaps claimed and resent by another worker; resumed, it would send the patient the
-- questionnaire a second time, and its fenced outcome record would only then find the claim gone. No row back:
-- the claim is gone, nothing is sent. Only a pause between this statement and the call (microseconds of work)
-- that outlasts stuck-processing-after can still double a resend.
UPDATE inbox_message
   SET updated_at = now()
 WHERE id = :#id
   AND status = 'PROCESSING'
   AND claim_token = CAST(:#token AS UUID)
RETURNING id
