-- Fewer foreign keys and indexes on the rows the evaluator writes for
-- every due monitor (an incident, its opened event, a delivery per
-- channel): each foreign key is a look-up and a row lock in the parent at
-- every insert, each index an entry.
--
-- The foreign keys dropped here are implied by one that stays, so every
-- deletion still removes the same rows:
--
--   - incidents.project_id: an incident goes with its monitor
--     (incidents.monitor_id), which goes with its project;
--   - incident_events.project_id: an event goes with its monitor
--     (incident_events.monitor_id);
--   - deliveries.project_id, .monitor_id and .incident_id: a delivery goes
--     with its event (deliveries.event_id), which goes with its incident
--     and its monitor, or, for a report, with its report
--     (deliveries.report_id), which goes with its channel and project. The
--     new check says that every delivery has one of the two.
--
-- A delivery still goes with its channel (deliveries.channel_id).
-- deliveries_event_idx (event_id) is the prefix of the unique index on
-- (event_id, channel_id), which serves every look-up by event, the
-- cascade from incident_events among them.

--
-- Dropping a foreign key takes ACCESS EXCLUSIVE on the table it is in and
-- on the table it references (projects, monitors, incidents here). The
-- locks are taken first, monitors before the others, in the order a
-- ping's batch and an evaluator's claim take theirs (monitors, then
-- projects in the batch's load, then the incident tables): taken one
-- constraint after another instead, the migration held projects while it
-- waited for monitors, and a batch of a replica still serving, holding
-- monitors and reading projects, deadlocked with it.

-- +goose Up
LOCK TABLE monitors, projects, incidents, incident_events, deliveries IN ACCESS EXCLUSIVE MODE;
ALTER TABLE incidents DROP CONSTRAINT incidents_project_id_fkey;
ALTER TABLE incident_events DROP CONSTRAINT incident_events_project_id_fkey;
ALTER TABLE deliveries
    DROP CONSTRAINT deliveries_project_id_fkey,
    DROP CONSTRAINT deliveries_monitor_id_fkey,
    DROP CONSTRAINT deliveries_incident_id_fkey,
    ADD CONSTRAINT deliveries_event_or_report CHECK (event_id IS NOT NULL OR report_id IS NOT NULL);
DROP INDEX deliveries_event_idx;

-- +goose Down
LOCK TABLE monitors, projects, incidents, incident_events, deliveries IN ACCESS EXCLUSIVE MODE;
CREATE INDEX deliveries_event_idx ON deliveries (event_id);
ALTER TABLE deliveries
    DROP CONSTRAINT deliveries_event_or_report,
    ADD CONSTRAINT deliveries_incident_id_fkey FOREIGN KEY (incident_id) REFERENCES incidents (id) ON DELETE CASCADE,
    ADD CONSTRAINT deliveries_monitor_id_fkey FOREIGN KEY (monitor_id) REFERENCES monitors (id) ON DELETE CASCADE,
    ADD CONSTRAINT deliveries_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;
ALTER TABLE incident_events ADD CONSTRAINT incident_events_project_id_fkey
    FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;
ALTER TABLE incidents ADD CONSTRAINT incidents_project_id_fkey
    FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE;
