-- incidents and incident_events lose their foreign keys to monitors; the
-- delete trigger on monitors of 0026 (monitors_deleted_history) deletes
-- the incidents and the events of the monitors a statement deleted as
-- well, which is what the foreign keys' ON DELETE CASCADE did (a
-- project's deletion deletes its monitors by cascade, and so theirs).
--
-- The evaluator opens an incident, with its opened event, for every due
-- monitor that is missed, and each row inserted checked its foreign key:
-- a look-up of the monitor and a KEY SHARE lock on its row, two for each
-- due monitor, on a row the claim already holds FOR UPDATE. Without them
-- PostgreSQL's CPU per due monitor fell by a tenth and the burst's p99 by
-- a fifth or more (docs/benchmarks.md, Evaluator, eighth round).
--
-- The check proved nothing the writers do not already hold. The writers
-- of incidents and of events tied to a monitor (a ping's batch, the
-- evaluator's claim, a monitor's notices) lock the monitor FOR UPDATE
-- before they write, as 0026 says of pings and runs, so a monitor cannot
-- be deleted between their read of it and their insert, and a delete
-- that waits for them deletes what they wrote once they commit. The one
-- writer that does not lock the monitor, a reminder (qIncidentRemind),
-- locks its open incident FOR UPDATE and inserts an event of that
-- incident: the trigger deletes incidents first, waits for that lock, and
-- the event goes with its incident by incident_events.incident_id's
-- foreign key, which stays. The events without an incident (monitor
-- events) go by monitor_id, after the incidents.
--
-- As in 0026, the function turns hash and merge joins and sequential
-- scans off for itself: its plans are kept per connection, and the
-- look-ups of the deleted monitors go through incidents_monitor_opened_idx
-- and incident_events_monitor_idx.
--
-- The locks are taken first, monitors before the incident tables, in the
-- order a ping's batch and an evaluator's claim take theirs (0027 says
-- why: a replica still serving would otherwise deadlock with the
-- migration). Dropping the foreign keys changes only the catalog.
--
-- Down deletes the incidents and events whose monitor no longer exists
-- (there are none unless rows were written by hand while the foreign keys
-- were off), adds the foreign keys back, validated, and puts back 0026's
-- function.

-- +goose Up
LOCK TABLE monitors, incidents, incident_events IN ACCESS EXCLUSIVE MODE;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION monitors_deleted_history() RETURNS trigger LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off AS $$
BEGIN
    DELETE FROM pings p USING monitors_deleted d WHERE p.monitor_id = d.id;
    DELETE FROM runs r USING monitors_deleted d WHERE r.monitor_id = d.id;
    DELETE FROM incidents i USING monitors_deleted d WHERE i.monitor_id = d.id;
    DELETE FROM incident_events e USING monitors_deleted d WHERE e.monitor_id = d.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

ALTER TABLE incidents DROP CONSTRAINT incidents_monitor_id_fkey;
ALTER TABLE incident_events DROP CONSTRAINT incident_events_monitor_id_fkey;

-- +goose Down
LOCK TABLE monitors, incidents, incident_events IN ACCESS EXCLUSIVE MODE;

DELETE FROM incidents i WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = i.monitor_id);
DELETE FROM incident_events e WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = e.monitor_id);
ALTER TABLE incidents ADD CONSTRAINT incidents_monitor_id_fkey
    FOREIGN KEY (monitor_id) REFERENCES monitors (id) ON DELETE CASCADE;
ALTER TABLE incident_events ADD CONSTRAINT incident_events_monitor_id_fkey
    FOREIGN KEY (monitor_id) REFERENCES monitors (id) ON DELETE CASCADE;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION monitors_deleted_history() RETURNS trigger LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off AS $$
BEGIN
    DELETE FROM pings p USING monitors_deleted d WHERE p.monitor_id = d.id;
    DELETE FROM runs r USING monitors_deleted d WHERE r.monitor_id = d.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
