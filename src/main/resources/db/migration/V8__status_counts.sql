-- Row counts per status without reading the table (issue 22): the gauges on every pod and GET /ops/inbox/stats
-- asked "SELECT status, count(*) ... GROUP BY status", a full scan that grows with years of COMPLETED rows.
-- Unfinished rows (RECEIVED, PROCESSING, FAILED) are few - the backlog - and are still counted live through
-- their partial indexes. The finished ones (COMPLETED, DEAD) are counted as they change:
--   * every change writes a delta row (insert-only, so concurrent workers never wait on one counter row);
--   * the redelivery job folds the deltas into inbox_status_total each tick (sql/fold-status-counts.sql);
--   * inbox_status_counts() reads totals plus the deltas not yet folded: exact, read-only.
-- Only a row entering or leaving COMPLETED/DEAD fires a trigger (WHEN is evaluated without calling the
-- function): receiving, claiming and failing a row cost nothing extra; a completion costs one small insert.
-- The totals start in V9 (one statement, one snapshot), after these triggers exist.
-- CREATE TRIGGER takes a SHARE ROW EXCLUSIVE lock for an instant once it has it; Flyway's connection has a short
-- lock_timeout (adapter.migration.lock-timeout, config/FlywayConnection): behind a long transaction it queues the
-- receptions for at most that long, then fails and the next start retries.

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

-- Every status with its count, in one statement (one snapshot, so exact at any moment) and read-only (a replica,
-- a read-only transaction, a dashboard may call it): the finished ones from their totals plus the deltas not yet
-- folded (sql/fold-status-counts.sql, each tick of the redelivery job, keeps those few), the unfinished ones
-- counted through inbox_message_status_id_idx (only their own index entries are read).
CREATE FUNCTION inbox_status_counts() RETURNS TABLE (status TEXT, total BIGINT) LANGUAGE sql STABLE AS $$
    SELECT t.status, t.total + coalesce((SELECT sum(d.delta) FROM inbox_status_delta d WHERE d.status = t.status), 0)::bigint
      FROM inbox_status_total t
    UNION ALL
    SELECT m.status, count(*) FROM inbox_message m WHERE m.status IN ('RECEIVED', 'PROCESSING', 'FAILED') GROUP BY m.status
$$;
