-- Folds the count deltas of finished rows (V8) into their totals, so inbox_status_counts() sums only the deltas
-- of the last tick. Run by the redelivery job (one instance per tick) in a route of its own (inbox-fold-counts),
-- whose failure ends only this fold. Bounded, and SKIP LOCKED: a delta held by another fold, a TRUNCATE or an
-- open transaction is folded at a later tick (the totals' own rows are locked only for the instant of their
-- UPDATE, so a fold waits at most for another fold's commit). With the redelivery job off on every instance,
-- deltas accumulate: the counts stay exact, each read sums more of them.
-- 5,000 a tick (1,000 a second at the default 5 s, ten times the completions of a busy day's peak): 25,000 took
-- 84 ms on an idle PostgreSQL 17, but 20,000 ran past the main pool's statement bound (3.5 s, on CPU, no lock
-- wait: the big-table benchmark's fold watcher) while a VACUUM of a 1 M-row inbox took the machine's two cores.
-- A backlog (a bulk update or requeue, the job off for a while) drains a batch per tick.
WITH folded AS (
    DELETE FROM inbox_status_delta
     WHERE id IN (SELECT id FROM inbox_status_delta ORDER BY id LIMIT 5000 FOR UPDATE SKIP LOCKED)
    RETURNING status, delta
), sums AS (
    SELECT status, sum(delta) AS delta FROM folded GROUP BY status
)
UPDATE inbox_status_total t SET total = t.total + s.delta FROM sums s WHERE t.status = s.status
