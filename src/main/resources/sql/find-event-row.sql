-- Whether the row an event names is there: its id, holding the event's subject and type. Asked only after the
-- claim was refused and nothing holds the row.
-- Run by: routes/inbox-process.camel.yaml, step inbox-process-find-event-row (camel-sql, named parameters :#id,
-- :#srvyDrawupNo, :#msgType from ProcessingRecord.eventKey; an event without a subject is checked by its id alone).
-- Why: an event is published only after its row committed, and rows leave only by retention (after
-- adapter.retention.keep-finished, long after the topic dropped their events). An event without its row is an
-- acknowledged message the database lost: restored to an earlier point, or failed over to a replica that was
-- behind (docs/operations.md, "After a database restore"). Its id may meanwhile name a new message (the identity
-- sequence went back with the database), hence the subject and type. The sender will not send it again, so the
-- event is the one record of it left: the route logs and counts it instead of ignoring it as a duplicate.
SELECT EXISTS (SELECT 1
                 FROM inbox_message
                WHERE id = :#id
                  AND (CAST(:#srvyDrawupNo AS TEXT) IS NULL OR srvy_drawup_no = CAST(:#srvyDrawupNo AS TEXT))
                  AND (CAST(:#msgType AS TEXT) IS NULL OR msg_type = CAST(:#msgType AS TEXT)))
