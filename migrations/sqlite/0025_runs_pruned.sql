-- runs_pruned counts the prunings of a monitor's runs (the history
-- retention, VIGIL_KEEP_RUNS). Pings and the evaluator write a monitor's
-- row with every change of its runs; pruning deletes runs alone, so it
-- counts itself here, and the row's version (see MonitorListPage), on
-- which the monitor list caches sparklines and answers 304, changes with
-- what the list draws.

-- +goose Up
ALTER TABLE monitors ADD COLUMN runs_pruned INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE monitors DROP COLUMN runs_pruned;
