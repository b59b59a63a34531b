-- Fewer foreign keys and indexes on the rows the evaluator writes for
-- every due monitor (see the postgres dialect's 0027 for which, and why
-- every deletion still removes the same rows). SQLite cannot drop a
-- foreign key, so incidents, incident_events and deliveries are rebuilt
-- without them, as SQLite's ALTER TABLE documentation prescribes (see
-- 0008 for why with foreign keys off and NO TRANSACTION).

-- +goose NO TRANSACTION
-- +goose Up
PRAGMA foreign_keys = OFF;

-- +goose StatementBegin
BEGIN IMMEDIATE;
-- +goose StatementEnd

CREATE TABLE incidents_rebuilt (
    id              TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL,
    monitor_id      TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    opened_at       INTEGER NOT NULL,
    resolved_at     INTEGER,
    summary         TEXT NOT NULL DEFAULT '',
    resolve_summary TEXT NOT NULL DEFAULT '',
    run_seq         INTEGER NOT NULL DEFAULT 0,
    ping_id         INTEGER NOT NULL DEFAULT 0,
    reminded_at     INTEGER,
    held            INTEGER NOT NULL DEFAULT 0,
    suppressed_by   TEXT
) STRICT;
INSERT INTO incidents_rebuilt (id, project_id, monitor_id, kind, opened_at, resolved_at, summary, resolve_summary, run_seq, ping_id, reminded_at, held, suppressed_by)
    SELECT id, project_id, monitor_id, kind, opened_at, resolved_at, summary, resolve_summary, run_seq, ping_id, reminded_at, held, suppressed_by FROM incidents;
DROP TABLE incidents;
ALTER TABLE incidents_rebuilt RENAME TO incidents;
CREATE UNIQUE INDEX incidents_one_open_idx ON incidents (monitor_id, kind) WHERE resolved_at IS NULL;
CREATE INDEX incidents_project_opened_idx ON incidents (project_id, opened_at);
CREATE INDEX incidents_monitor_opened_idx ON incidents (monitor_id, opened_at);
CREATE INDEX incidents_open_idx ON incidents (opened_at) WHERE resolved_at IS NULL;
CREATE INDEX incidents_resolved_idx ON incidents (resolved_at) WHERE resolved_at IS NOT NULL;
CREATE INDEX incidents_suppressed_by_idx ON incidents (suppressed_by) WHERE suppressed_by IS NOT NULL;

CREATE TABLE incident_events_rebuilt (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    -- NULL for a monitor event.
    incident_id TEXT REFERENCES incidents (id) ON DELETE CASCADE,
    monitor_id  TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    project_id  TEXT NOT NULL,
    kind        TEXT NOT NULL,
    at          INTEGER NOT NULL,
    summary     TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT INTO incident_events_rebuilt (id, incident_id, monitor_id, project_id, kind, at, summary)
    SELECT id, incident_id, monitor_id, project_id, kind, at, summary FROM incident_events;
DROP TABLE incident_events;
ALTER TABLE incident_events_rebuilt RENAME TO incident_events;
CREATE UNIQUE INDEX incident_events_once_idx ON incident_events (incident_id, kind)
    WHERE kind IN ('incident.opened', 'incident.resolved');
CREATE INDEX incident_events_incident_idx ON incident_events (incident_id, id);
CREATE INDEX incident_events_monitor_idx ON incident_events (monitor_id);
CREATE INDEX incident_events_project_idx ON incident_events (project_id, id);

CREATE TABLE deliveries_rebuilt (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id      TEXT NOT NULL,
    -- NULL for a monitor event and a report.
    incident_id     TEXT,
    -- NULL for a report.
    event_id        INTEGER REFERENCES incident_events (id) ON DELETE CASCADE,
    -- The event's kind, such as incident.opened or report.weekly.
    event           TEXT NOT NULL,
    -- NULL for a report.
    monitor_id      TEXT,
    channel_id      TEXT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    -- pending, sent or failed.
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER,
    finished_at     INTEGER,
    -- When the group of an incident.opened goes out (see 0019).
    group_at        INTEGER,
    -- The report delivered; NULL for an event.
    report_id       TEXT REFERENCES reports (id) ON DELETE CASCADE,
    -- One delivery of an event per channel, whatever happens.
    UNIQUE (event_id, channel_id),
    -- Every delivery goes with its event or its report.
    CHECK (event_id IS NOT NULL OR report_id IS NOT NULL)
) STRICT;
INSERT INTO deliveries_rebuilt (id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts, created_at, next_attempt_at, finished_at, group_at, report_id)
    SELECT id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts, created_at, next_attempt_at, finished_at, group_at, report_id FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_rebuilt RENAME TO deliveries;
CREATE INDEX deliveries_incident_idx ON deliveries (incident_id, channel_id, event_id);
CREATE INDEX deliveries_channel_idx ON deliveries (channel_id);
CREATE INDEX deliveries_monitor_events_idx ON deliveries (monitor_id, channel_id, event_id) WHERE incident_id IS NULL;
CREATE INDEX deliveries_group_idx ON deliveries (channel_id, group_at, id)
    WHERE state = 'pending' AND group_at IS NOT NULL;
CREATE INDEX deliveries_report_idx ON deliveries (report_id) WHERE report_id IS NOT NULL;

-- +goose StatementBegin
COMMIT;
-- +goose StatementEnd
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;

-- +goose StatementBegin
BEGIN IMMEDIATE;
-- +goose StatementEnd

DELETE FROM deliveries WHERE event_id IS NULL AND report_id IS NULL;
CREATE TABLE incidents_rebuilt (
    id              TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    monitor_id      TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    opened_at       INTEGER NOT NULL,
    resolved_at     INTEGER,
    summary         TEXT NOT NULL DEFAULT '',
    resolve_summary TEXT NOT NULL DEFAULT '',
    run_seq         INTEGER NOT NULL DEFAULT 0,
    ping_id         INTEGER NOT NULL DEFAULT 0,
    reminded_at     INTEGER,
    held            INTEGER NOT NULL DEFAULT 0,
    suppressed_by   TEXT
) STRICT;
INSERT INTO incidents_rebuilt (id, project_id, monitor_id, kind, opened_at, resolved_at, summary, resolve_summary, run_seq, ping_id, reminded_at, held, suppressed_by)
    SELECT id, project_id, monitor_id, kind, opened_at, resolved_at, summary, resolve_summary, run_seq, ping_id, reminded_at, held, suppressed_by FROM incidents;
DROP TABLE incidents;
ALTER TABLE incidents_rebuilt RENAME TO incidents;
CREATE UNIQUE INDEX incidents_one_open_idx ON incidents (monitor_id, kind) WHERE resolved_at IS NULL;
CREATE INDEX incidents_project_opened_idx ON incidents (project_id, opened_at);
CREATE INDEX incidents_monitor_opened_idx ON incidents (monitor_id, opened_at);
CREATE INDEX incidents_open_idx ON incidents (opened_at) WHERE resolved_at IS NULL;
CREATE INDEX incidents_resolved_idx ON incidents (resolved_at) WHERE resolved_at IS NOT NULL;
CREATE INDEX incidents_suppressed_by_idx ON incidents (suppressed_by) WHERE suppressed_by IS NOT NULL;

CREATE TABLE incident_events_rebuilt (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    -- NULL for a monitor event.
    incident_id TEXT REFERENCES incidents (id) ON DELETE CASCADE,
    monitor_id  TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    at          INTEGER NOT NULL,
    summary     TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT INTO incident_events_rebuilt (id, incident_id, monitor_id, project_id, kind, at, summary)
    SELECT id, incident_id, monitor_id, project_id, kind, at, summary FROM incident_events;
DROP TABLE incident_events;
ALTER TABLE incident_events_rebuilt RENAME TO incident_events;
CREATE UNIQUE INDEX incident_events_once_idx ON incident_events (incident_id, kind)
    WHERE kind IN ('incident.opened', 'incident.resolved');
CREATE INDEX incident_events_incident_idx ON incident_events (incident_id, id);
CREATE INDEX incident_events_monitor_idx ON incident_events (monitor_id);
CREATE INDEX incident_events_project_idx ON incident_events (project_id, id);

CREATE TABLE deliveries_rebuilt (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id      TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    -- NULL for a monitor event and a report.
    incident_id     TEXT REFERENCES incidents (id) ON DELETE CASCADE,
    -- NULL for a report.
    event_id        INTEGER REFERENCES incident_events (id) ON DELETE CASCADE,
    -- The event's kind, such as incident.opened or report.weekly.
    event           TEXT NOT NULL,
    -- NULL for a report.
    monitor_id      TEXT REFERENCES monitors (id) ON DELETE CASCADE,
    channel_id      TEXT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    -- pending, sent or failed.
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER,
    finished_at     INTEGER,
    -- When the group of an incident.opened goes out (see 0019).
    group_at        INTEGER,
    -- The report delivered; NULL for an event.
    report_id       TEXT REFERENCES reports (id) ON DELETE CASCADE,
    -- One delivery of an event per channel, whatever happens.
    UNIQUE (event_id, channel_id)
) STRICT;
INSERT INTO deliveries_rebuilt (id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts, created_at, next_attempt_at, finished_at, group_at, report_id)
    SELECT id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts, created_at, next_attempt_at, finished_at, group_at, report_id FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_rebuilt RENAME TO deliveries;
CREATE INDEX deliveries_incident_idx ON deliveries (incident_id, channel_id, event_id);
CREATE INDEX deliveries_channel_idx ON deliveries (channel_id);
CREATE INDEX deliveries_monitor_events_idx ON deliveries (monitor_id, channel_id, event_id) WHERE incident_id IS NULL;
CREATE INDEX deliveries_event_idx ON deliveries (event_id);
CREATE INDEX deliveries_group_idx ON deliveries (channel_id, group_at, id)
    WHERE state = 'pending' AND group_at IS NOT NULL;
CREATE INDEX deliveries_report_idx ON deliveries (report_id) WHERE report_id IS NOT NULL;

-- +goose StatementBegin
COMMIT;
-- +goose StatementEnd
PRAGMA foreign_keys = ON;
