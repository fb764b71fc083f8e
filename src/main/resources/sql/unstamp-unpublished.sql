-- Rows this tick took (republish-lost-events.sql, republish-due-retries.sql stamped their published_at) but did not
-- publish: the deadline passed, or Kafka refused an event. Their stamp goes, so the next tick takes them again,
-- oldest first, instead of after lost-event-after or retry-delay more (and newer rows of their subjects held behind
-- them meanwhile).
-- Run by: routes/inbox-redeliver.camel.yaml, step inbox-redeliver-unstamp (camel-sql), after the tick's publishing.
-- Why this WHERE: only rows still waiting for their event (RECEIVED, FAILED): one a consumer claimed meanwhile is
-- left alone. The ids come as one comma-separated text (one parameter, whatever their number).
UPDATE inbox_message
   SET published_at = NULL
 WHERE id = ANY (CAST(string_to_array(:#ids, ',') AS BIGINT[]))
   AND status IN ('RECEIVED', 'FAILED')
