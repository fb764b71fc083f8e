-- Takes the subject's synchronous lease for one registration (V17__synchronous_leases.sql): a new row, or the row
-- of a holder gone for stuck-processing-after (its pod died mid-registration).
-- Run by: routes/inbox-receive.camel.yaml, step inbox-receive-take-lease (camel-sql), before a synchronous
-- registration's first call.
-- Why this shape: one statement, the primary key decides between two pods taking it at once; returns the holder
-- when taken, no row when another registration of the subject runs now.
INSERT INTO synchronous_lease (srvy_drawup_no, holder, taken_at)
VALUES (:#srvyDrawupNo, :#holder, now())
ON CONFLICT (srvy_drawup_no) DO UPDATE
   SET holder = EXCLUDED.holder,
       taken_at = now()
 WHERE synchronous_lease.taken_at < now() - :#stuckAfterMillis * INTERVAL '1 millisecond'
RETURNING holder
