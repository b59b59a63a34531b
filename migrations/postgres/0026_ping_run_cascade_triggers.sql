-- pings and runs lose their foreign keys to monitors; a statement-level
-- trigger on monitors deletes the pings and runs of the monitors a
-- statement deleted, which is what the foreign keys' ON DELETE CASCADE
-- did (a project's deletion deletes its monitors by cascade, and so theirs).
--
-- Every ping's batch inserts into pings and upserts into runs, and each
-- row inserted checked its foreign key: a look-up of the monitor and a
-- KEY SHARE lock on its row, two a ping. Without them PostgreSQL's CPU per
-- ping fell by about a quarter (docs/benchmarks.md, Ingest, fourth round).
-- The check proved nothing a batch does not already hold: a batch reads
-- and locks every monitor it names (FOR UPDATE, qMonitorLockBatch) before
-- it writes a ping or a run, and fails whole when one of those monitors
-- is not updated, so a monitor cannot be deleted between its load and its
-- pings' insert. A delete that comes while a batch holds the monitor waits
-- for the batch's commit, and its trigger, whose statements each take a
-- new snapshot, then deletes the pings that batch wrote; a batch that comes
-- while a delete holds the monitor finds it gone when the delete commits.
-- The evaluator writes runs of the monitors it claimed FOR UPDATE.
--
-- New partitions of pings (pgstore/partitions.go) no longer clone a
-- foreign key, so making one no longer locks monitors (it took SHARE ROW
-- EXCLUSIVE there, which waited behind every open batch, up to the
-- partitions' lock timeout, and made the pings behind it wait).
--
-- The trigger function's two DELETEs are planned once per connection and
-- their plans kept (PL/pgSQL caches them), whatever the number of monitors
-- the statement that first ran them deleted: a hash join with a scan of
-- every partition of pings, kept for every later delete of one monitor,
-- would read all pings each time. As in 0022 the function turns hash and
-- merge joins and sequential scans off for itself, so that it looks up the
-- deleted monitors through pings_monitor_idx and runs' primary key.
--
-- The lock order is that of a ping's batch (monitors, then pings, then
-- runs), taken at the strongest mode first, as in 0015 and 0022: a batch
-- of the previous release that holds its monitors and then inserts pings
-- would otherwise deadlock with the upgrade of a weaker lock. Dropping the
-- foreign keys changes only the catalog; the lock is held for a moment.
--
-- Down deletes the pings and runs whose monitor no longer exists (there
-- are none unless rows were written by hand while the foreign keys were
-- off; the cascade would have deleted them), then adds the foreign keys
-- back, validated.

-- +goose Up
LOCK TABLE monitors IN ACCESS EXCLUSIVE MODE;
LOCK TABLE pings IN ACCESS EXCLUSIVE MODE;
LOCK TABLE runs IN ACCESS EXCLUSIVE MODE;

-- +goose StatementBegin
CREATE FUNCTION monitors_deleted_history() RETURNS trigger LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off AS $$
BEGIN
    DELETE FROM pings p USING monitors_deleted d WHERE p.monitor_id = d.id;
    DELETE FROM runs r USING monitors_deleted d WHERE r.monitor_id = d.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER monitors_deleted_history AFTER DELETE ON monitors
    REFERENCING OLD TABLE AS monitors_deleted
    FOR EACH STATEMENT EXECUTE FUNCTION monitors_deleted_history();

-- The partitions' copies of pings' foreign key go with it.
ALTER TABLE pings DROP CONSTRAINT pings_monitor_id_fkey;
ALTER TABLE runs DROP CONSTRAINT runs_monitor_id_fkey;

-- +goose Down
LOCK TABLE monitors IN ACCESS EXCLUSIVE MODE;
LOCK TABLE pings IN ACCESS EXCLUSIVE MODE;
LOCK TABLE runs IN ACCESS EXCLUSIVE MODE;

DELETE FROM pings p WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = p.monitor_id);
DELETE FROM runs r WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = r.monitor_id);
ALTER TABLE pings ADD CONSTRAINT pings_monitor_id_fkey
    FOREIGN KEY (monitor_id) REFERENCES monitors (id) ON DELETE CASCADE;
ALTER TABLE runs ADD CONSTRAINT runs_monitor_id_fkey
    FOREIGN KEY (monitor_id) REFERENCES monitors (id) ON DELETE CASCADE;

DROP TRIGGER monitors_deleted_history ON monitors;
DROP FUNCTION monitors_deleted_history();
