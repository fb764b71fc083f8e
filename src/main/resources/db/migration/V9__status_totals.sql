-- The starting totals of V8's counters: one statement, so the count and the deltas it discards are read in
-- one snapshot - a delta committed before it is in the count and is deleted here, one committed after it is
-- not in the count and stays for the first fold. It takes no lock that stops a reception (the count reads
-- the table; on a large table it takes as long as one index scan of the finished rows).
WITH discarded AS (DELETE FROM inbox_status_delta RETURNING 1)
INSERT INTO inbox_status_total (status, total)
SELECT s.status, (SELECT count(*) FROM inbox_message m WHERE m.status = s.status)
  FROM (VALUES ('COMPLETED'), ('DEAD')) AS s (status);
