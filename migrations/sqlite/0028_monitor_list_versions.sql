-- monitor_list_versions counts, per project, the writes of its monitors'
-- rows (insert, update, delete) and of their run prunings
-- (monitor_runs_pruned), counted by triggers in the transaction of the
-- write: the monitor list's marker (MonitorListMarker) is this count, one
-- row read, where it was a hash of every column of every monitor of the
-- project (23 to 27 ms at 5,000 monitors). Any statement that changes a
-- monitor row moves it, whichever code path runs it; an update that
-- writes the same values moves it too, which costs the next refresh a
-- reload, never a stale page. A migration that rebuilds monitors or
-- monitor_runs_pruned (and so drops their triggers) must create them
-- again (TestListVersionTriggers).

-- +goose Up
CREATE TABLE monitor_list_versions (
    project_id TEXT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    n          INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO monitor_list_versions (project_id, n) SELECT id, 0 FROM projects;

-- +goose StatementBegin
CREATE TRIGGER projects_list_version_insert AFTER INSERT ON projects BEGIN
    INSERT INTO monitor_list_versions (project_id, n) VALUES (NEW.id, 0);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER monitors_list_version_insert AFTER INSERT ON monitors BEGIN
    UPDATE monitor_list_versions SET n = n + 1 WHERE project_id = NEW.project_id;
END;
-- +goose StatementEnd

-- Every update of a row, a ping's included. One project, by equality: an
-- IN list of the old and the new project cost a ping 3 to 4 µs more of
-- the writer's CPU, this one nothing measurable (docs/benchmarks.md,
-- Dashboard, sixth round).
-- +goose StatementBegin
CREATE TRIGGER monitors_list_version_update AFTER UPDATE ON monitors BEGIN
    UPDATE monitor_list_versions SET n = n + 1 WHERE project_id = NEW.project_id;
END;
-- +goose StatementEnd

-- A monitor moved to another project also moves the old project's count;
-- a statement that does not set project_id (a ping's) does not run it.
-- +goose StatementBegin
CREATE TRIGGER monitors_list_version_move AFTER UPDATE OF project_id ON monitors
    WHEN OLD.project_id IS NOT NEW.project_id BEGIN
    UPDATE monitor_list_versions SET n = n + 1 WHERE project_id = OLD.project_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER monitors_list_version_delete AFTER DELETE ON monitors BEGIN
    UPDATE monitor_list_versions SET n = n + 1 WHERE project_id = OLD.project_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER monitor_runs_pruned_list_version_insert AFTER INSERT ON monitor_runs_pruned BEGIN
    UPDATE monitor_list_versions SET n = n + 1
        WHERE project_id = (SELECT project_id FROM monitors WHERE id = NEW.monitor_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER monitor_runs_pruned_list_version_update AFTER UPDATE ON monitor_runs_pruned BEGIN
    UPDATE monitor_list_versions SET n = n + 1
        WHERE project_id = (SELECT project_id FROM monitors WHERE id = NEW.monitor_id);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER monitor_runs_pruned_list_version_update;
DROP TRIGGER monitor_runs_pruned_list_version_insert;
DROP TRIGGER monitors_list_version_delete;
DROP TRIGGER monitors_list_version_move;
DROP TRIGGER monitors_list_version_update;
DROP TRIGGER monitors_list_version_insert;
DROP TRIGGER projects_list_version_insert;
DROP TABLE monitor_list_versions;
