-- monitor_runs_pruned gets the project of each monitor it counts, kept by
-- a trigger, so that the monitor list's marker (pgstore's
-- qMonitorListMarker) reads a project's prunings by this index instead of
-- joining monitor_runs_pruned to each of the project's monitors: the marker,
-- read by every refresh of every open list, took 3.1 ms at 5,000 monitors
-- with the join and 1.9 ms without (docs/benchmarks.md, Dashboard, eighth
-- round).
--
-- The trigger sets the column on every insert and update, from the
-- monitor's row, whatever wrote it: a previous release still running
-- during a rollout writes monitor_runs_pruned without the column, and its
-- prunings still count for the right project. A monitor moved to another
-- project keeps its row under the old project until its next pruning; the
-- marker stays right, since the move itself changes the monitor's row in
-- both projects, and a pruning sets the row's project to the monitor's own
-- (moving the old project's marker too, which costs it one reload).
-- Nothing on the ping path writes this table.

-- +goose Up
ALTER TABLE monitor_runs_pruned ADD COLUMN project_id text;
UPDATE monitor_runs_pruned AS r SET project_id = m.project_id FROM monitors AS m WHERE m.id = r.monitor_id;
ALTER TABLE monitor_runs_pruned ALTER COLUMN project_id SET NOT NULL;
CREATE INDEX monitor_runs_pruned_project_idx ON monitor_runs_pruned (project_id);

-- +goose StatementBegin
CREATE FUNCTION monitor_runs_pruned_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.project_id := (SELECT project_id FROM monitors WHERE id = NEW.monitor_id);
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER monitor_runs_pruned_project BEFORE INSERT OR UPDATE ON monitor_runs_pruned
    FOR EACH ROW EXECUTE FUNCTION monitor_runs_pruned_project();

-- +goose Down
DROP TRIGGER monitor_runs_pruned_project ON monitor_runs_pruned;
DROP FUNCTION monitor_runs_pruned_project();
DROP INDEX monitor_runs_pruned_project_idx;
ALTER TABLE monitor_runs_pruned DROP COLUMN project_id;
