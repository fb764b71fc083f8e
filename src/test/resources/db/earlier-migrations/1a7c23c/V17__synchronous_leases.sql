-- The subjects being registered synchronously now (the rollback toggle): one row per subject while its
-- registration runs, taken before the first downstream call and removed when it ends. A registration is not
-- on record until it succeeded, so without it a second message of the subject (a SUBMIT after its SEND, a
-- sender's retry) on this or another synchronous pod ran beside the first: a SUBMIT refused before its SEND's
-- bundle existed, a resend sent twice. The second is answered 503 "please retry" while the row is there.
-- A row whose pod died is taken over after stuck-processing-after, as a PROCESSING row of a lost worker is reset.
-- A table of its own: nothing of inbox_message (its counts, its sweeps, its ordering guard) sees these rows.
CREATE TABLE synchronous_lease (
    srvy_drawup_no TEXT PRIMARY KEY,
    holder         TEXT NOT NULL,
    taken_at       TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);
