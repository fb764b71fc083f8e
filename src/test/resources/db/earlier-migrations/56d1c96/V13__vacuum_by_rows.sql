-- Vacuum inbox_message by a fixed number of dead rows, with index cleanup, whatever the table's size.
-- Why: every message passes through RECEIVED, PROCESSING (and FAILED) on its way to COMPLETED, and each of those
-- updates leaves a dead entry in the indexes, the partial ones the redelivery sweeps walk from their left end
-- included (inbox_message_received_idx, _processing_idx, _failed_idx, _reply_idx). A scan only marks such an
-- entry killed and still reads its page; only a vacuum removes it. By default autovacuum comes after
-- 50 + 20 % of the table's rows are dead (400,000 at 2 million rows, 2 million at 10 million: days of traffic),
-- and even then PostgreSQL skips index cleanup when under 2 % of the table's pages hold dead rows, which on a
-- large table is the usual case. Measured on 2 million finished rows: 30,000 messages taken through without a
-- vacuum, the sweeps' SELECTs read 1,242 pages (27 ms) on the next tick and about 240 (9 ms) on every later one;
-- after a vacuum with index cleanup 10 pages (0.6 ms). A default vacuum of 21,000 dead rows there skipped the
-- indexes ("index scan bypassed: 0.99 % of pages"); with index cleanup it took 0.6 s over 597 MB of indexes.
-- 20,000 dead rows is about 7,000 messages: about 15 vacuums a day at 100,000 messages, each one pass over the
-- indexes (InboxVacuumTest). Takes SHARE UPDATE EXCLUSIVE only: inserts and updates go on meanwhile.
ALTER TABLE inbox_message SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 20000,
    vacuum_index_cleanup = on
);
