-- The management API: alert channels, the fields of a monitor that a person
-- set (so that a source's declaration does not overwrite them), and the
-- secret each project signs its badge URLs with.

-- +goose Up
CREATE TABLE channels (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    name       TEXT NOT NULL,
    -- The kind's config as JSON text, secrets included; the API never
    -- returns them.
    config     TEXT NOT NULL,
    is_default INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (project_id, name)
) STRICT;
CREATE INDEX channels_project_idx ON channels (project_id, name, id);

-- The configuration fields a person set through the API (a JSON array); a
-- declaration of the monitor's source leaves them alone.
ALTER TABLE monitors ADD COLUMN person_fields TEXT NOT NULL DEFAULT '[]';
CREATE INDEX monitors_project_source_idx ON monitors (project_id, source) WHERE source <> '';

-- The key badge URLs of the project are signed with (HMAC-SHA256). It is made
-- by the store from crypto/rand the first time a badge is asked for:
-- SQLite's randomblob() is not meant for secrets.
ALTER TABLE projects ADD COLUMN badge_key TEXT;

-- +goose Down
ALTER TABLE projects DROP COLUMN badge_key;
DROP INDEX monitors_project_source_idx;
ALTER TABLE monitors DROP COLUMN person_fields;
DROP TABLE channels;
