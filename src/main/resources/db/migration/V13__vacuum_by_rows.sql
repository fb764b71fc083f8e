-- Vacuum inbox_message by a fixed number of dead rows, with index cleanup, whatever the table's size.
-- Why: every message passes through RECEIVED, PROCESSING (and FAILED) on its way to COMPLETED, and each of those
-- updates leaves a dead entry in the indexes, the partial ones the redelivery sweeps walk from their left end
-- included (inbox_message_received_idx, _processing_idx, _failed_idx, _reply_idx). A scan only marks such an
-- entry killed and still reads its page, and nothing but a vacuum removes entries at that end of these indexes.
-- By default autovacuum comes after 50 + 20 % of the table's rows are dead (400,000 at 2 million rows, 2 million
-- at 10 million), and PostgreSQL may then skip index cleanup, which it does when under 2 % of the table's pages
-- hold dead rows - on a large table the usual case. Measured on 2 million finished rows: 30,000 messages taken
-- through without a vacuum, the sweeps' SELECTs read 1,242 pages (27 ms) on the next tick and about 240 (9 ms)
-- on every later one; after a vacuum with index cleanup 10 pages (0.6 ms). A default vacuum of 21,000 dead rows
-- there skipped the indexes ("index scan bypassed: 0.99 % of pages"); with index cleanup it took 0.6 s
-- (unthrottled) over 597 MB of indexes.
-- 100,000 dead rows bounds what a tick walks to about the measured 9 ms case. The price: each such vacuum reads
-- every index of the table in full (2.3 GB at 10 million rows), throttled by autovacuum's cost limit to seconds;
-- at 100,000 messages a day (two or three non-HOT updates each, plus retention's daily redactions and deletes)
-- about five a day. An emergency freeze by hand can skip the indexes: VACUUM (FREEZE, INDEX_CLEANUP OFF).
-- The ALTER takes SHARE UPDATE EXCLUSIVE: inserts and updates go on, but it waits for a running VACUUM or
-- ANALYZE of the table. An ordinary autovacuum yields within deadlock_timeout; an anti-wraparound one or an
-- operator's VACUUM does not, and can last hours: the ALTER tries for about 2 minutes (pods start within the
-- startup probe's budget), then leaves the defaults with a warning in the log instead of failing every start -
-- apply it by hand then (InboxVacuumTest checks the settings).
DO $$
BEGIN
    FOR try IN 1..48 LOOP
        BEGIN
            PERFORM set_config('lock_timeout', '2s', true);
            ALTER TABLE inbox_message SET (
                autovacuum_vacuum_scale_factor = 0,
                autovacuum_vacuum_threshold = 100000,
                vacuum_index_cleanup = on
            );
            PERFORM set_config('lock_timeout', '0', true);
            RETURN;
        EXCEPTION WHEN lock_not_available THEN
            PERFORM pg_sleep(0.5);
        END;
    END LOOP;
    RAISE WARNING 'inbox_message stayed locked by a VACUUM or ANALYZE for 2 minutes: its autovacuum settings (V13) '
        'were not applied; run ALTER TABLE inbox_message SET (autovacuum_vacuum_scale_factor = 0, '
        'autovacuum_vacuum_threshold = 100000, vacuum_index_cleanup = on) once it has finished';
END $$;
