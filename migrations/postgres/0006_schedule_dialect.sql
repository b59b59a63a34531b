-- A cron schedule's dialect: whose reading of the expression (cronie,
-- robfig or quartz) the monitor follows. Existing cron schedules were read
-- as cronie reads them, and stay so; other kinds have none ('').

-- +goose Up
ALTER TABLE monitors ADD COLUMN schedule_dialect text NOT NULL DEFAULT '';
UPDATE monitors SET schedule_dialect = 'cronie' WHERE schedule_kind = 'cron';

-- +goose Down
ALTER TABLE monitors DROP COLUMN schedule_dialect;
