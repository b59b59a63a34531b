-- On PostgreSQL this migration gives monitor_runs_pruned the project of
-- each monitor, so that the monitor list's marker reads a project's
-- prunings without joining them to its monitors. SQLite's marker is a
-- count kept by triggers (0028, monitor_list_versions) and reads neither
-- table, so nothing changes here: the migration exists so that both
-- dialects keep one list of names.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
