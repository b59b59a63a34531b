-- Reports: a weekly or monthly summary sent to a channel (its report
-- field). The evaluator's replicas claim each report of a channel and
-- period by inserting its row here, in the transaction that creates its
-- delivery: the unique key lets one claim win, so a report is sent once
-- however many replicas look, and a crash either commits both or neither.
-- The row keeps what the report says (body), so every attempt sends the
-- same report.
--
-- A report's delivery has no incident, no event and no monitor: those
-- columns become nullable, and report_id names the report.

-- +goose Up
ALTER TABLE channels ADD COLUMN report text NOT NULL DEFAULT '';

CREATE TABLE reports (
    id           text PRIMARY KEY,
    project_id   text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    channel_id   text NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    -- weekly or monthly.
    period       text NOT NULL,
    period_start timestamptz NOT NULL,
    period_end   timestamptz NOT NULL,
    created_at   timestamptz NOT NULL,
    body         jsonb NOT NULL,
    -- One report of a channel per period, whatever happens.
    UNIQUE (channel_id, period, period_start)
);
CREATE INDEX reports_project_idx ON reports (project_id, period_start);

ALTER TABLE deliveries ALTER COLUMN monitor_id DROP NOT NULL;
ALTER TABLE deliveries ALTER COLUMN event_id DROP NOT NULL;
ALTER TABLE deliveries ADD COLUMN report_id text REFERENCES reports (id) ON DELETE CASCADE;
CREATE INDEX deliveries_report_idx ON deliveries (report_id) WHERE report_id IS NOT NULL;

-- +goose Down
DROP INDEX deliveries_report_idx;
DELETE FROM deliveries WHERE report_id IS NOT NULL;
ALTER TABLE deliveries DROP COLUMN report_id;
ALTER TABLE deliveries ALTER COLUMN event_id SET NOT NULL;
ALTER TABLE deliveries ALTER COLUMN monitor_id SET NOT NULL;
DROP TABLE reports;
ALTER TABLE channels DROP COLUMN report;
