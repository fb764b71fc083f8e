-- The rows an operator's bulk requeue matches: one status (DEAD or FAILED), optionally a text in the last
-- error, the last business error's code (exactly), a srvyDrawupNo prefix and a reception time range; oldest
-- first, at most `limit` ids, each with its stored last error and the number of matching rows, counted up to
-- `countCap` (one past Requeues.MOST_COUNTED, or past MOST_SEARCHED for a text search): a count over every match read
-- each matching row (and its last_error) on every dry run, so a DEAD backlog of a few hundred thousand rows ran past
-- the statement bound and answered 503, again at each retry. Past the cap the answers say so (countCapped).
-- Run by: routes/inbox-requeue.camel.yaml, step inbox-requeue-many-find (camel-sql), for a dry run and for the
-- requeue; named parameters from ops/Requeues.read.
-- Why this WHERE: strpos/starts_with take the operator's text literally (no LIKE wildcards to escape); a
-- redacted row (payload removed by retention) cannot be processed again, so it never matches; the status
-- filter rides inbox_message_status_id_idx. The text filter is only a first cut (`lastError`: the longest part of
-- the operator's text without a mask's '*'): the text is matched as operators see it, masked once more, by
-- Requeues.shown (a stored text older than a mask's wording must not answer a search for what the mask hides).
WITH matched AS MATERIALIZED (
    SELECT id
      FROM inbox_message
     WHERE status = :#status
       AND redacted_at IS NULL
       AND (CAST(:#lastError AS TEXT) IS NULL OR strpos(last_error, CAST(:#lastError AS TEXT)) > 0)
       AND (CAST(:#lastErrorCode AS TEXT) IS NULL OR last_error_code = CAST(:#lastErrorCode AS TEXT))
       AND (CAST(:#prefix AS TEXT) IS NULL OR starts_with(srvy_drawup_no, CAST(:#prefix AS TEXT)))
       AND (CAST(:#receivedFrom AS TIMESTAMPTZ) IS NULL OR created_at >= CAST(:#receivedFrom AS TIMESTAMPTZ))
       AND (CAST(:#receivedTo AS TIMESTAMPTZ) IS NULL OR created_at < CAST(:#receivedTo AS TIMESTAMPTZ))
     ORDER BY id
     LIMIT :#countCap
)
SELECT m.id,
       m.last_error,
       (SELECT count(*) FROM matched) AS matching
  FROM inbox_message m
 WHERE m.id IN (SELECT id FROM matched ORDER BY id LIMIT :#limit)
 ORDER BY m.id
