-- Status pages: public pages of a project's monitors, and the short notes
-- people attach to incidents for them. A page is read and written whole by
-- the planning layer, as one JSON document (monitors.StatusPage); its slug
-- is a column too, unique across projects, since /status/{slug} names no
-- project. A note is one JSON document (monitors.IncidentNote) beside the
-- incident it belongs to, gone with it.

-- +goose Up
CREATE TABLE status_pages (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    slug       TEXT NOT NULL UNIQUE,
    doc        TEXT NOT NULL
);
CREATE INDEX status_pages_project_idx ON status_pages (project_id, slug);

CREATE TABLE incident_notes (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    incident_id TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    doc         TEXT NOT NULL
);
CREATE INDEX incident_notes_incident_idx ON incident_notes (incident_id);

-- +goose Down
DROP TABLE incident_notes;
DROP TABLE status_pages;
