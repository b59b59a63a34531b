-- Monitor events: notifications about a monitor rather than an incident
-- (monitor.undeclared, monitor.redeclared). They are incident events with
-- no incident, delivered like the others, so their incident_id, and that
-- of their deliveries, is NULL.

-- +goose Up
ALTER TABLE incident_events ALTER COLUMN incident_id DROP NOT NULL;
ALTER TABLE deliveries ALTER COLUMN incident_id DROP NOT NULL;
CREATE INDEX deliveries_monitor_events_idx ON deliveries (monitor_id, channel_id, event_id) WHERE incident_id IS NULL;

-- +goose Down
DROP INDEX deliveries_monitor_events_idx;
DELETE FROM deliveries WHERE incident_id IS NULL;
DELETE FROM incident_events WHERE incident_id IS NULL;
ALTER TABLE deliveries ALTER COLUMN incident_id SET NOT NULL;
ALTER TABLE incident_events ALTER COLUMN incident_id SET NOT NULL;
