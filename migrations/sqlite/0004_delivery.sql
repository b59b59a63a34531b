-- Durable delivery of incident events to alert channels.
--
-- The transaction that records an incident event also creates one delivery
-- per channel that the event goes to (the monitor's own channels, or the
-- project's default channels when it names none), and the River job that
-- sends it. River's own tables are created by River's migrations, which
-- Vigil applies at start beside these.
--
-- A delivery is pending until one attempt succeeds (sent) or retrying can
-- no longer help (failed). Every attempt is logged, with its outcome and
-- the receiver's answer, secrets removed.

-- +goose Up
CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id      TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    incident_id     TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    event_id        INTEGER NOT NULL REFERENCES incident_events (id) ON DELETE CASCADE,
    -- The event's kind, such as incident.opened.
    event           TEXT NOT NULL,
    monitor_id      TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    channel_id      TEXT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    -- pending, sent or failed.
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER,
    finished_at     INTEGER,
    -- One delivery of an event per channel, whatever happens.
    UNIQUE (event_id, channel_id)
) STRICT;
CREATE INDEX deliveries_incident_idx ON deliveries (incident_id, channel_id, event_id);
CREATE INDEX deliveries_channel_idx ON deliveries (channel_id);

CREATE TABLE delivery_attempts (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id     INTEGER NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    project_id      TEXT NOT NULL,
    incident_id     TEXT NOT NULL,
    event           TEXT NOT NULL,
    channel_id      TEXT NOT NULL,
    attempt         INTEGER NOT NULL,
    started_at      INTEGER NOT NULL,
    finished_at     INTEGER NOT NULL,
    -- success, retry or failed.
    outcome         TEXT NOT NULL,
    -- The receiver's HTTP status, when it answered one.
    status_code     INTEGER,
    -- What went wrong, with URLs and secrets removed.
    error           TEXT NOT NULL DEFAULT '',
    -- When the next attempt is due, after a retry outcome.
    next_attempt_at INTEGER,
    UNIQUE (delivery_id, attempt)
) STRICT;
CREATE INDEX delivery_attempts_incident_idx ON delivery_attempts (incident_id, id);

-- When the last reminder of an open incident was sent (re-alerting).
ALTER TABLE incidents ADD COLUMN reminded_at INTEGER;
CREATE INDEX incidents_open_idx ON incidents (opened_at) WHERE resolved_at IS NULL;

-- +goose Down
DROP INDEX incidents_open_idx;
ALTER TABLE incidents DROP COLUMN reminded_at;
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
