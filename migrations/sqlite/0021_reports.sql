-- Reports: a weekly or monthly summary sent to a channel (its report
-- field). The evaluator's replicas claim each report of a channel and
-- period by inserting its row here, in the transaction that creates its
-- delivery: the unique key lets one claim win, so a report is sent once,
-- and a crash either commits both or neither. The row keeps what the
-- report says (body), so every attempt sends the same report.
--
-- A report's delivery has no incident, no event and no monitor, so
-- deliveries is rebuilt with those columns nullable and a report_id, as
-- SQLite's ALTER TABLE documentation prescribes (see 0008 for why with
-- foreign keys off and NO TRANSACTION).

-- +goose NO TRANSACTION
-- +goose Up
PRAGMA foreign_keys = OFF;

-- +goose StatementBegin
BEGIN IMMEDIATE;
-- +goose StatementEnd

ALTER TABLE channels ADD COLUMN report TEXT NOT NULL DEFAULT '';

CREATE TABLE reports (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    channel_id   TEXT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    -- weekly or monthly.
    period       TEXT NOT NULL,
    period_start INTEGER NOT NULL,
    period_end   INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    body         TEXT NOT NULL,
    -- One report of a channel per period, whatever happens.
    UNIQUE (channel_id, period, period_start)
) STRICT;
CREATE INDEX reports_project_idx ON reports (project_id, period_start);

CREATE TABLE deliveries_new (
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
INSERT INTO deliveries_new (id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts,
        created_at, next_attempt_at, finished_at, group_at)
    SELECT id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts,
        created_at, next_attempt_at, finished_at, group_at FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
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

-- +goose Down
PRAGMA foreign_keys = OFF;

-- +goose StatementBegin
BEGIN IMMEDIATE;
-- +goose StatementEnd

DELETE FROM deliveries WHERE report_id IS NOT NULL;
CREATE TABLE deliveries_old (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id      TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    incident_id     TEXT REFERENCES incidents (id) ON DELETE CASCADE,
    event_id        INTEGER NOT NULL REFERENCES incident_events (id) ON DELETE CASCADE,
    event           TEXT NOT NULL,
    monitor_id      TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    channel_id      TEXT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER,
    finished_at     INTEGER,
    group_at        INTEGER,
    UNIQUE (event_id, channel_id)
) STRICT;
INSERT INTO deliveries_old SELECT id, project_id, incident_id, event_id, event, monitor_id, channel_id, state, attempts,
    created_at, next_attempt_at, finished_at, group_at FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_old RENAME TO deliveries;
CREATE INDEX deliveries_incident_idx ON deliveries (incident_id, channel_id, event_id);
CREATE INDEX deliveries_channel_idx ON deliveries (channel_id);
CREATE INDEX deliveries_monitor_events_idx ON deliveries (monitor_id, channel_id, event_id) WHERE incident_id IS NULL;
CREATE INDEX deliveries_event_idx ON deliveries (event_id);
CREATE INDEX deliveries_group_idx ON deliveries (channel_id, group_at, id)
    WHERE state = 'pending' AND group_at IS NOT NULL;
DROP TABLE reports;
ALTER TABLE channels DROP COLUMN report;

-- +goose StatementBegin
COMMIT;
-- +goose StatementEnd
PRAGMA foreign_keys = ON;
