-- Accounts and history with a lifecycle.
--
-- A disabled user cannot sign in (their sessions are deleted when they are
-- disabled). Resolved incidents older than VIGIL_KEEP_HISTORY are pruned
-- with their events, deliveries and attempts, through the foreign keys'
-- ON DELETE CASCADE: the indexes below let those cascades find their rows
-- without scanning the tables.

-- +goose Up
ALTER TABLE users ADD COLUMN disabled_at timestamptz;
CREATE INDEX incidents_resolved_idx ON incidents (resolved_at) WHERE resolved_at IS NOT NULL;
CREATE INDEX deliveries_event_idx ON deliveries (event_id);
CREATE INDEX delivery_attempts_delivery_idx ON delivery_attempts (delivery_id);

-- +goose Down
DROP INDEX delivery_attempts_delivery_idx;
DROP INDEX deliveries_event_idx;
DROP INDEX incidents_resolved_idx;
ALTER TABLE users DROP COLUMN disabled_at;
