-- On SQLite this migration adds monitor_list_versions, a count per project
-- of the writes of its monitors, kept by triggers, which SQLite's monitor
-- list marker reads instead of hashing every column of every row.
-- PostgreSQL's marker sums a hash of each row's version (its xmin, which
-- every write changes, and its count of run prunings; see pgstore's
-- qMonitorListMarker), and nothing changes here: the migration exists so
-- that both dialects keep one list of names.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
