-- monitor_runs_pruned counts the prunings of each monitor's runs (the
-- history retention, VIGIL_KEEP_RUNS). Pings and the evaluator write a
-- monitor's row with every change of its runs; pruning deletes runs alone,
-- so it counts itself here, and a monitor's version in the list
-- (MonitorListPage, MonitorListMarker), on which the dashboard keeps
-- sparklines and answers 304, changes with what its sparkline draws. A
-- table of its own, not a column of monitors: a wider monitors row leaves
-- less room on its pages for the HOT updates of pings
-- (TestPingUpdatesAreHOT).

-- +goose Up
CREATE TABLE monitor_runs_pruned (
    monitor_id TEXT PRIMARY KEY REFERENCES monitors (id) ON DELETE CASCADE,
    n          INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE monitor_runs_pruned;
