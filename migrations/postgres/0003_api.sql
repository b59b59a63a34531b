-- The management API: alert channels, the fields of a monitor that a person
-- set (so that a source's declaration does not overwrite them), and the
-- secret each project signs its badge URLs with.

-- +goose Up
CREATE TABLE channels (
    id         text PRIMARY KEY,
    project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind       text NOT NULL,
    name       text NOT NULL,
    -- The kind's config, secrets included; the API never returns them.
    config     jsonb NOT NULL,
    is_default boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (project_id, name)
);
CREATE INDEX channels_project_idx ON channels (project_id, name, id);

-- The configuration fields a person set through the API; a declaration of
-- the monitor's source leaves them alone.
ALTER TABLE monitors ADD COLUMN person_fields text[] NOT NULL DEFAULT '{}';
-- A declaration locks the monitors of its source.
CREATE INDEX monitors_project_source_idx ON monitors (project_id, source) WHERE source <> '';

-- The key badge URLs of the project are signed with (HMAC-SHA256). It is made
-- by the store from crypto/rand the first time a badge is asked for, so
-- projects created before or after this migration get one alike.
ALTER TABLE projects ADD COLUMN badge_key text;

-- +goose Down
ALTER TABLE projects DROP COLUMN badge_key;
DROP INDEX monitors_project_source_idx;
ALTER TABLE monitors DROP COLUMN person_fields;
DROP TABLE channels;
