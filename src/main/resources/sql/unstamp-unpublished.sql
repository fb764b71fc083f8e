-- Rows this tick took (republish-lost-events.sql, republish-due-retries.sql and reset-stuck-rows.sql stamped their
-- published_at) and did not publish because its budget closed (the deadline passed, or an earlier publish failed):
-- their stamp goes, so the next tick takes them again, oldest first, instead of after lost-event-after or
-- retry-delay more (and newer rows of their subjects held behind them meanwhile). A row whose own publish failed
-- keeps its stamp: taken again at once, one partition down would stop every tick at that row.
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-unstamp (camel-sql), after the tick's publishing.
-- Why this WHERE: a row taken as RECEIVED (lost, reset) only while still RECEIVED, one taken as a due retry only
-- while still FAILED: one a consumer claimed, or an operator requeued (its event queued for the paced republish),
-- meanwhile is left alone. Each list is one comma-separated text (one parameter, whatever the number of ids).
UPDATE inbox_message
   SET published_at = NULL
 WHERE (id = ANY (CAST(string_to_array(:#received, ',') AS BIGINT[])) AND status = 'RECEIVED')
    OR (id = ANY (CAST(string_to_array(:#failed, ',') AS BIGINT[])) AND status = 'FAILED')
