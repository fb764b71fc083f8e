-- Whether the row an event names exists at all; asked only after its claim was refused and nothing holds it.
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-find-event-row (camel-sql, named parameter :#id).
-- Why: an event is published only after its row committed, and rows leave only by retention (after
-- adapter.retention.keep-finished, long after the topic dropped their events). An event without a row is an
-- acknowledged message the database lost: restored to an earlier point, or failed over to a replica that was
-- behind (docs/operations.md, "After a database restore"). The sender will not send it again, so the event is the
-- one record of it left: the route logs and counts it instead of ignoring it as a duplicate.
SELECT EXISTS (SELECT 1 FROM inbox_message WHERE id = :#id)
