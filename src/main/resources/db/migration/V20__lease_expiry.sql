-- The synchronous lease's expiry, set by the pod that takes it from its own bounds (its HTTP and database
-- timeouts), so another pod whose bounds are shorter (a configuration roll, a URL's socketTimeout) does not take a
-- lease whose registration may still run and register the subject beside it. A lease an older version took has
-- none: it expires by its age, as before (claim-synchronous-registration.sql). A small table, rows only while the
-- rollback toggle is on; a nullable column without a default changes no row.
ALTER TABLE synchronous_lease ADD COLUMN IF NOT EXISTS expires_at TIMESTAMP WITH TIME ZONE;
