-- Row counts per status without reading the table (issue 22): the gauges on every pod and GET /ops/inbox/stats
-- asked "SELECT status, count(*) ... GROUP BY status", a full scan that grows with years of COMPLETED rows.
-- Unfinished rows (RECEIVED, PROCESSING, FAILED) are few - the backlog - and are still counted live through
-- their partial indexes. The finished ones (COMPLETED, DEAD) are counted as they change:
--   * every change writes a delta row (insert-only, so concurrent workers never wait on one counter row);
--   * inbox_status_counts() folds the deltas into inbox_status_total and returns the counts;
--     two pods folding at once serialise on the delta rows and the total rows and stay exact.
-- Only a row entering or leaving COMPLETED/DEAD fires a trigger (WHEN is evaluated without calling the
-- function): receiving, claiming and failing a row cost nothing extra; a completion costs one small insert.
-- The totals start in V9 (one statement, one snapshot), after these triggers exist.
-- CREATE TRIGGER takes a SHARE ROW EXCLUSIVE lock for an instant; Flyway's connection has a short lock_timeout
-- (config/FlywayConnection), so it never queues the receptions behind a long transaction.

CREATE TABLE inbox_status_delta (
    id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    status TEXT   NOT NULL,
    delta  BIGINT NOT NULL
);

CREATE TABLE inbox_status_total (
    status TEXT   PRIMARY KEY CHECK (status IN ('COMPLETED', 'DEAD')),
    total  BIGINT NOT NULL
);

CREATE FUNCTION inbox_status_row_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.status IN ('COMPLETED', 'DEAD') THEN
        INSERT INTO inbox_status_delta (status, delta) VALUES (OLD.status, -1);
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.status IN ('COMPLETED', 'DEAD') THEN
        INSERT INTO inbox_status_delta (status, delta) VALUES (NEW.status, 1);
    END IF;
    RETURN NULL;
END $$;

-- retention deletes in batches: one delta row per status and statement, not per row
CREATE FUNCTION inbox_status_deleted_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO inbox_status_delta (status, delta)
    SELECT status, -count(*) FROM gone WHERE status IN ('COMPLETED', 'DEAD') GROUP BY status;
    RETURN NULL;
END $$;

CREATE FUNCTION inbox_status_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM inbox_status_delta;
    UPDATE inbox_status_total SET total = 0;
    RETURN NULL;
END $$;

CREATE TRIGGER inbox_status_inserted AFTER INSERT ON inbox_message
    FOR EACH ROW WHEN (NEW.status IN ('COMPLETED', 'DEAD')) EXECUTE FUNCTION inbox_status_row_delta();
CREATE TRIGGER inbox_status_changed AFTER UPDATE OF status ON inbox_message
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                       AND (OLD.status IN ('COMPLETED', 'DEAD') OR NEW.status IN ('COMPLETED', 'DEAD')))
    EXECUTE FUNCTION inbox_status_row_delta();
CREATE TRIGGER inbox_status_deleted AFTER DELETE ON inbox_message
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION inbox_status_deleted_delta();
CREATE TRIGGER inbox_status_truncated AFTER TRUNCATE ON inbox_message
    FOR EACH STATEMENT EXECUTE FUNCTION inbox_status_truncated();

-- Every status with its count: the finished ones from their totals (the deltas folded first), the unfinished
-- ones counted (inbox_message_status_id_idx: only their own index entries are read). VOLATILE: it writes.
CREATE FUNCTION inbox_status_counts() RETURNS TABLE (status TEXT, total BIGINT) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    WITH folded AS (DELETE FROM inbox_status_delta RETURNING inbox_status_delta.status, inbox_status_delta.delta),
         sums AS (SELECT f.status, sum(f.delta) AS delta FROM folded f GROUP BY f.status)
    UPDATE inbox_status_total t SET total = t.total + s.delta FROM sums s WHERE t.status = s.status;
    RETURN QUERY
        SELECT t.status, t.total FROM inbox_status_total t
        UNION ALL
        SELECT m.status, count(*) FROM inbox_message m
         WHERE m.status IN ('RECEIVED', 'PROCESSING', 'FAILED') GROUP BY m.status;
END $$;
