-- Maintenance windows: planned work during which the monitors a window
-- covers open no incident. A window is read and written whole by the
-- planning layer, as one JSON document (monitors.MaintenanceWindow); the
-- rules of what it covers and when live there, not in SQL.

-- +goose Up
CREATE TABLE maintenance_windows (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    doc        TEXT NOT NULL
);
CREATE INDEX maintenance_windows_project_idx ON maintenance_windows (project_id, id);

-- +goose Down
DROP TABLE maintenance_windows;
