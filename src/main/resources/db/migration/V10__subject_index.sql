-- The operator list filtered by subject (GET /ops/inbox?srvyDrawupNo=, named query InboxRow.bySubject), newest
-- first, whatever the subject's status: the subject indexes of V1/V7 cover only unfinished, COMPLETED SEND or DEAD
-- rows, so a subject with few rows was found by reading the whole table backwards (seconds at 10 million rows).
-- CONCURRENTLY, outside a transaction (V10__subject_index.sql.conf), as V5 and V7.
SET lock_timeout = 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_message_subject_idx ON inbox_message (srvy_drawup_no, id DESC);
RESET lock_timeout;
