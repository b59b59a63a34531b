-- Monitor events: notifications about a monitor rather than an incident
-- (monitor.undeclared, monitor.redeclared). They are incident events with
-- no incident, delivered like the others, so their incident_id, and that
-- of their deliveries, is NULL.
--
-- SQLite cannot drop a NOT NULL, so both tables are rebuilt as SQLite's
-- ALTER TABLE documentation prescribes: with foreign keys off (dropping a
-- parent table with them on would delete its children by cascade), which
-- cannot change inside a transaction, hence NO TRANSACTION and an explicit
-- one around the rebuild. The store migrates on its one writer connection,
-- so every statement runs on the connection whose pragma is changed.

-- +goose NO TRANSACTION
-- +goose Up
PRAGMA foreign_keys = OFF;

-- +goose StatementBegin
BEGIN IMMEDIATE;
-- +goose StatementEnd

CREATE TABLE incident_events_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    -- NULL for a monitor event.
    incident_id TEXT REFERENCES incidents (id) ON DELETE CASCADE,
    monitor_id  TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    at          INTEGER NOT NULL,
    summary     TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT INTO incident_events_new (id, incident_id, monitor_id, project_id, kind, at, summary)
    SELECT id, incident_id, monitor_id, project_id, kind, at, summary FROM incident_events;
DROP TABLE incident_events;
ALTER TABLE incident_events_new RENAME TO incident_events;
CREATE UNIQUE INDEX incident_events_once_idx ON incident_events (incident_id, kind)
    WHERE kind IN ('incident.opened', 'incident.resolved');
CREATE INDEX incident_events_incident_idx ON incident_events (incident_id, id);
CREATE INDEX incident_events_monitor_idx ON incident_events (monitor_id);
CREATE INDEX incident_events_project_idx ON incident_events (project_id, id);

CREATE TABLE deliveries_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id      TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    -- NULL for a monitor event.
    incident_id     TEXT REFERENCES incidents (id) ON DELETE CASCADE,
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
INSERT INTO deliveries_new (id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts,
        created_at, next_attempt_at, finished_at)
    SELECT id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts,
        created_at, next_attempt_at, finished_at FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
CREATE INDEX deliveries_incident_idx ON deliveries (incident_id, channel_id, event_id);
CREATE INDEX deliveries_channel_idx ON deliveries (channel_id);
CREATE INDEX deliveries_monitor_events_idx ON deliveries (monitor_id, channel_id, event_id) WHERE incident_id IS NULL;

-- +goose StatementBegin
COMMIT;
-- +goose StatementEnd
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;

-- +goose StatementBegin
BEGIN IMMEDIATE;
-- +goose StatementEnd

DELETE FROM deliveries WHERE incident_id IS NULL;
DELETE FROM incident_events WHERE incident_id IS NULL;
CREATE TABLE incident_events_old (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    monitor_id  TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    at          INTEGER NOT NULL,
    summary     TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT INTO incident_events_old SELECT id, incident_id, monitor_id, project_id, kind, at, summary FROM incident_events;
DROP TABLE incident_events;
ALTER TABLE incident_events_old RENAME TO incident_events;
CREATE UNIQUE INDEX incident_events_once_idx ON incident_events (incident_id, kind)
    WHERE kind IN ('incident.opened', 'incident.resolved');
CREATE INDEX incident_events_incident_idx ON incident_events (incident_id, id);
CREATE INDEX incident_events_monitor_idx ON incident_events (monitor_id);
CREATE INDEX incident_events_project_idx ON incident_events (project_id, id);
CREATE TABLE deliveries_old (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id      TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    incident_id     TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    event_id        INTEGER NOT NULL REFERENCES incident_events (id) ON DELETE CASCADE,
    event           TEXT NOT NULL,
    monitor_id      TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    channel_id      TEXT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER,
    finished_at     INTEGER,
    UNIQUE (event_id, channel_id)
) STRICT;
INSERT INTO deliveries_old SELECT id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts,
    created_at, next_attempt_at, finished_at FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_old RENAME TO deliveries;
CREATE INDEX deliveries_incident_idx ON deliveries (incident_id, channel_id, event_id);
CREATE INDEX deliveries_channel_idx ON deliveries (channel_id);

-- +goose StatementBegin
COMMIT;
-- +goose StatementEnd
PRAGMA foreign_keys = ON;
