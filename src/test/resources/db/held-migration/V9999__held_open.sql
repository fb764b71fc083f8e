-- A migration of a later release that runs for as long as the test holds advisory lock 424242 (NothingToMigrateTest):
-- its pod holds Flyway's lock meanwhile, as one building an index on a big table does. Without a lock_timeout (the
-- service's Flyway connections have 5 s, which would end it).
SET LOCAL lock_timeout = 0;
SELECT pg_advisory_xact_lock(424242);
