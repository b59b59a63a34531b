-- Held notifications: snooze and dependencies. A monitor may be snoozed
-- until a time (snoozed_until) and may depend on other monitors of its
-- project (depends_on, their IDs). An incident opened while its monitor
-- was snoozed, or while a monitor it depends on had an open incident, is
-- held: it is recorded and shown, but its opened event is delivered only
-- when the hold ends (the planning layer decides; see monitors/state.go).
-- suppressed_by names the parent incident a suppressed incident opened
-- under.
-- depends_on is NULL for none, so that the row of a monitor without
-- dependencies is as narrow as before (a ping's update of it stays HOT).

-- +goose Up
ALTER TABLE monitors ADD COLUMN depends_on text[];
ALTER TABLE monitors ADD COLUMN snoozed_until timestamptz;
ALTER TABLE incidents ADD COLUMN held boolean NOT NULL DEFAULT false;
ALTER TABLE incidents ADD COLUMN suppressed_by text;
CREATE INDEX incidents_suppressed_by_idx ON incidents (suppressed_by) WHERE suppressed_by IS NOT NULL;
-- The dependents of a monitor whose incident ends are woken (depends_on @>
-- ARRAY[id]): only the monitors with dependencies are in the index, and a
-- ping's update of a monitor changes no column of it (it stays HOT).
CREATE INDEX monitors_depends_on_idx ON monitors USING gin (depends_on) WHERE depends_on IS NOT NULL;

-- +goose Down
DROP INDEX monitors_depends_on_idx;
DROP INDEX incidents_suppressed_by_idx;
ALTER TABLE incidents DROP COLUMN suppressed_by;
ALTER TABLE incidents DROP COLUMN held;
ALTER TABLE monitors DROP COLUMN snoozed_until;
ALTER TABLE monitors DROP COLUMN depends_on;
