-- incidents and incident_events keep their foreign keys to monitors on
-- SQLite (PostgreSQL replaces them with its delete trigger on monitors in
-- this migration), for the reason 0026 gives for pings and runs: SQLite
-- checks a foreign key with one look-up in a primary key whose pages the
-- writer has just read and locks nothing, and dropping one would rebuild
-- the table. The migration exists so that both dialects keep one list of
-- names.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
