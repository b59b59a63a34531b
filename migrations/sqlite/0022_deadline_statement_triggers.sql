-- On PostgreSQL this migration keeps monitor_deadlines with statement-level
-- triggers instead of row triggers (see the postgres dialect's 0022).
-- SQLite has no monitor_deadlines (its due index stays on monitors, see
-- 0015) and nothing changes: the migration is here so that the names
-- match across dialects.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
