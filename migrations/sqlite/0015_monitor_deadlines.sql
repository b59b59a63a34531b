-- On PostgreSQL this migration moves the evaluator's due index off the
-- monitors table so that a ping's update of its monitor is HOT (see the
-- postgres dialect's 0015). SQLite has no HOT updates to win and keeps its
-- layout: the migration is here so that the names match across dialects.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
