-- The retention job's Quartz trigger was stored with the JVM's time zone (UTC in the image): "daily 03:30" ran
-- at 12:30 in Seoul, at peak load. The route now gives the trigger adapter.legacy.zone, but camel-quartz
-- reschedules a stored trigger only when its cron text changes, so that zone would never reach a database that
-- already holds the trigger. The stored job and trigger are removed here, of every scheduler this database
-- holds; the first instance that starts its retention route stores them again, in the hospital's zone (a pod
-- of the old version still running during the rollout keeps no copy of its own: the job store is this table).
-- Quartz locks these rows only for the instant it fires or acquires a trigger; the migration's lock timeout
-- bounds the wait. The redelivery job (every minute; no zone to take) is not touched.
DELETE FROM qrtz_cron_triggers
 WHERE trigger_group = 'inbox'
   AND trigger_name = 'retention';

DELETE FROM qrtz_triggers
 WHERE trigger_group = 'inbox'
   AND trigger_name = 'retention';

DELETE FROM qrtz_job_details
 WHERE job_group = 'inbox'
   AND job_name = 'retention';
