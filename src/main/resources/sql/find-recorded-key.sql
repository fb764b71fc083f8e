-- The row on record for a synchronous registration whose record stored nothing: its own, under the id reserved with
-- its lease and its holder's token (an earlier try of the record committed while its answer was lost, after this
-- try's snapshot), else the row holding its Idempotency-Key (stored meanwhile by a pod still in inbox mode while the
-- toggle rolls out): the answer carries that id.
-- Run by: routes/inbox-receive.camel.yaml, step inbox-receive-find-recorded-key (camel-sql), after
-- record-synchronous-registration.sql stored nothing; a statement of its own, so it sees the other commit.
-- Why this WHERE: the primary key and the unique idempotency_key answer it; its own record first.
SELECT id
  FROM inbox_message
 WHERE (id = CAST(:#recordId AS BIGINT) AND claim_token = CAST(:#holder AS UUID))
    OR idempotency_key = CAST(:#idempotencyKey AS TEXT)
 ORDER BY id = CAST(:#recordId AS BIGINT) DESC
 LIMIT 1
