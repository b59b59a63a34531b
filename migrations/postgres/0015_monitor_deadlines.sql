-- A ping's update of its monitor is HOT: the evaluator's due index leaves
-- the monitors table.
--
-- Every ping moves its monitor's next_deadline, and while monitors_due_idx
-- indexed that column no such update could be HOT (heap-only): each wrote
-- a new row version and an entry in every index of monitors, and left a
-- dead row behind (docs/benchmarks.md, Ingest). The due index now lives on
-- a narrow table of its own, monitor_deadlines, one row per monitor with
-- its deadline (NULL while paused), kept by triggers on monitors: the
-- monitors row stays the truth (the store's claim still checks
-- monitors.next_deadline on the row it locks), monitor_deadlines is its
-- index. Triggers, not the store's code, keep it, so a previous release
-- still running during a rollout, which writes only monitors, keeps it
-- right too; its evaluator's claim then reads monitors without an index
-- (correct, slower) until it is replaced.
--
-- fillfactor 50 leaves room on each page of monitors for the new versions
-- of its rows, which HOT needs; it applies to pages written from now on.
-- Measured by TestPingUpdatesAreHOT (10 batches of 200 pings): 99.2% of
-- the updates HOT at 50, 98.3% at 60, 91% at 70. It doubles the heap of
-- monitors, a small table next to pings.
--
-- The migration takes the lock that dropping the index needs (ACCESS
-- EXCLUSIVE) first, before any weaker one: an evaluator of the previous
-- release that holds claimed rows and then updates them would otherwise
-- deadlock with the lock's upgrade (TestUpgradeUnderLoad saw it). It holds
-- pings and claims back while it copies the deadlines (one narrow row per
-- monitor: a fraction of a second for thousands of monitors, a few seconds
-- for a million).

-- +goose Up
LOCK TABLE monitors IN ACCESS EXCLUSIVE MODE;
CREATE TABLE monitor_deadlines (
    monitor_id text PRIMARY KEY REFERENCES monitors (id) ON DELETE CASCADE,
    due_at     timestamptz
);
CREATE INDEX monitor_deadlines_due_idx ON monitor_deadlines (due_at) WHERE due_at IS NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION monitor_deadlines_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO monitor_deadlines (monitor_id, due_at)
    VALUES (NEW.id, CASE WHEN NEW.paused THEN NULL ELSE NEW.next_deadline END);
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION monitor_deadlines_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE monitor_deadlines SET due_at = CASE WHEN NEW.paused THEN NULL ELSE NEW.next_deadline END
    WHERE monitor_id = NEW.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER monitor_deadlines_insert AFTER INSERT ON monitors
    FOR EACH ROW EXECUTE FUNCTION monitor_deadlines_insert();
CREATE TRIGGER monitor_deadlines_update AFTER UPDATE OF next_deadline, paused ON monitors
    FOR EACH ROW WHEN (OLD.next_deadline IS DISTINCT FROM NEW.next_deadline OR OLD.paused IS DISTINCT FROM NEW.paused)
    EXECUTE FUNCTION monitor_deadlines_update();

INSERT INTO monitor_deadlines (monitor_id, due_at)
SELECT id, CASE WHEN paused THEN NULL ELSE next_deadline END FROM monitors;

DROP INDEX monitors_due_idx;
ALTER TABLE monitors SET (fillfactor = 50);

-- +goose Down
ALTER TABLE monitors RESET (fillfactor);
CREATE INDEX monitors_due_idx ON monitors (next_deadline) WHERE NOT paused AND next_deadline IS NOT NULL;
DROP TRIGGER monitor_deadlines_update ON monitors;
DROP TRIGGER monitor_deadlines_insert ON monitors;
DROP FUNCTION monitor_deadlines_update();
DROP FUNCTION monitor_deadlines_insert();
DROP TABLE monitor_deadlines;
