-- Vigil's schema on SQLite.
--
-- Times are INTEGER microseconds since the Unix epoch, UTC: compact, compared
-- and indexed as plain integers, with the precision of PostgreSQL's
-- timestamptz, so both stores keep the same instants. Booleans are INTEGER
-- 0 or 1. Tags, channels, the retry policy and the state are JSON text. The
-- tables are STRICT, so a value of the wrong type is an error rather than a
-- silent conversion.

-- +goose Up
CREATE TABLE projects (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    ping_key   TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    read_only    INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
) STRICT;
CREATE INDEX api_keys_project_idx ON api_keys (project_id, created_at, id);

CREATE TABLE monitors (
    id                  TEXT PRIMARY KEY,
    project_id          TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name                TEXT NOT NULL,
    slug                TEXT NOT NULL,
    -- A JSON array of strings, matched exactly with json_each.
    tags                TEXT NOT NULL DEFAULT '[]',
    schedule_kind       TEXT NOT NULL,
    schedule_expr       TEXT NOT NULL DEFAULT '',
    schedule_tz         TEXT NOT NULL DEFAULT '',
    every_seconds       INTEGER NOT NULL DEFAULT 0,
    grace_seconds       INTEGER NOT NULL,
    max_runtime_seconds INTEGER NOT NULL DEFAULT 0,
    deadline_seconds    INTEGER NOT NULL DEFAULT 0,
    alert_on_failure    TEXT NOT NULL,
    failure_threshold   INTEGER NOT NULL,
    recovery_threshold  INTEGER NOT NULL,
    overlap             TEXT NOT NULL,
    channels            TEXT NOT NULL DEFAULT '[]',
    paused              INTEGER NOT NULL DEFAULT 0,
    source              TEXT NOT NULL DEFAULT '',
    discovered          INTEGER NOT NULL DEFAULT 0,
    retry_policy        TEXT,
    ping_key            TEXT NOT NULL UNIQUE,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    -- The state machine's memory (monitors.State, JSON) and the parts of it
    -- that queries filter or sort on.
    status              TEXT NOT NULL,
    state               TEXT NOT NULL,
    last_ping_at        INTEGER,
    next_expected_at    INTEGER,
    next_deadline       INTEGER,
    UNIQUE (project_id, slug)
) STRICT;
-- The evaluator's claim: unpaused monitors by deadline.
CREATE INDEX monitors_due_idx ON monitors (next_deadline) WHERE NOT paused AND next_deadline IS NOT NULL;
CREATE INDEX monitors_project_name_idx ON monitors (project_id, name, id);

CREATE TABLE pings (
    -- AUTOINCREMENT: an ID is never reused, even after the newest pings were
    -- deleted with their monitor, so IDs stay usable as cursors.
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    monitor_id     TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL,
    at             INTEGER NOT NULL,
    rid            TEXT NOT NULL DEFAULT '',
    attempt        INTEGER NOT NULL DEFAULT 0,
    retry_at       INTEGER,
    exit_code      INTEGER,
    duration_ms    INTEGER,
    body           TEXT NOT NULL DEFAULT '',
    body_truncated INTEGER NOT NULL DEFAULT 0,
    remote_addr    TEXT NOT NULL DEFAULT '',
    user_agent     TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX pings_monitor_idx ON pings (monitor_id, id);

CREATE TABLE runs (
    monitor_id  TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    rid         TEXT NOT NULL DEFAULT '',
    started_at  INTEGER,
    finished_at INTEGER,
    outcome     TEXT NOT NULL DEFAULT '',
    duration_ms INTEGER,
    attempt     INTEGER NOT NULL DEFAULT 0,
    exit_code   INTEGER,
    will_retry  INTEGER NOT NULL DEFAULT 0,
    stuck       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (monitor_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE incidents (
    id              TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    monitor_id      TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    opened_at       INTEGER NOT NULL,
    resolved_at     INTEGER,
    summary         TEXT NOT NULL DEFAULT '',
    resolve_summary TEXT NOT NULL DEFAULT '',
    run_seq         INTEGER NOT NULL DEFAULT 0,
    ping_id         INTEGER NOT NULL DEFAULT 0
) STRICT;
-- The database itself forbids two open incidents of one kind on a monitor.
CREATE UNIQUE INDEX incidents_one_open_idx ON incidents (monitor_id, kind) WHERE resolved_at IS NULL;
CREATE INDEX incidents_project_opened_idx ON incidents (project_id, opened_at);
CREATE INDEX incidents_monitor_opened_idx ON incidents (monitor_id, opened_at);

CREATE TABLE incident_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    monitor_id  TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    at          INTEGER NOT NULL,
    summary     TEXT NOT NULL DEFAULT ''
) STRICT;
-- An incident opens once and resolves at most once.
CREATE UNIQUE INDEX incident_events_once_idx ON incident_events (incident_id, kind)
    WHERE kind IN ('incident.opened', 'incident.resolved');
CREATE INDEX incident_events_incident_idx ON incident_events (incident_id, id);
CREATE INDEX incident_events_monitor_idx ON incident_events (monitor_id);
CREATE INDEX incident_events_project_idx ON incident_events (project_id, id);

-- +goose Down
DROP TABLE incident_events;
DROP TABLE incidents;
DROP TABLE runs;
DROP TABLE pings;
DROP TABLE monitors;
DROP TABLE api_keys;
DROP TABLE projects;
