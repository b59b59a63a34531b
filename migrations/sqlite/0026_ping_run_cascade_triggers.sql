-- pings and runs keep their foreign keys to monitors on SQLite (PostgreSQL
-- replaces them with a delete trigger on monitors in this migration).
--
-- There the check of each inserted row took a look-up and a row lock on
-- the monitor, about a quarter of PostgreSQL's CPU per ping. SQLite checks
-- a foreign key with one look-up in monitors' primary key, whose pages the
-- batch has just read, and locks nothing: with and without the check
-- (foreign_keys off) the one writer's CPU per ping was the same within the
-- spread of the runs (docs/benchmarks.md, Ingest, fourth round). Dropping a
-- foreign key in SQLite means rebuilding the table, a copy of every ping,
-- for no gain, so the foreign keys and their ON DELETE CASCADE stay. The
-- migration exists so that both dialects keep one list of names.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
