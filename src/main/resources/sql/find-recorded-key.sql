-- The row on record under an Idempotency-Key: the synchronous path's answer when its own record found the key
-- taken (stored meanwhile by a pod still in inbox mode while the toggle rolls out): both answers carry that id.
-- Run by: routes/inbox-receive.camel.yaml, step inbox-receive-find-recorded-key (camel-sql), after
-- record-synchronous-registration.sql stored nothing; a statement of its own, so it sees the other commit.
-- Why this WHERE: idempotency_key is unique (its index answers it).
SELECT id
  FROM inbox_message
 WHERE idempotency_key = CAST(:#idempotencyKey AS TEXT)
