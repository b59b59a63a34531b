-- The evaluator's heartbeat and the record of Vigil's own outages (see the
-- PostgreSQL migration of the same name). Times are INTEGER microseconds
-- since the Unix epoch, UTC.

-- +goose Up
CREATE TABLE evaluator_heartbeat (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    -- The last time any evaluator began a pass; NULL before the first.
    last_pass_at INTEGER
) STRICT;
INSERT INTO evaluator_heartbeat (id) VALUES (1);

CREATE TABLE outages (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at         INTEGER NOT NULL UNIQUE,
    ended_at           INTEGER NOT NULL,
    monitors_postponed INTEGER NOT NULL DEFAULT 0,
    settled_at         INTEGER
) STRICT;
CREATE INDEX outages_unsettled_idx ON outages (id) WHERE settled_at IS NULL;

-- +goose Down
DROP TABLE outages;
DROP TABLE evaluator_heartbeat;
