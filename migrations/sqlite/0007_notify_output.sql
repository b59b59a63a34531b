-- Whether a monitor's notifications carry the tail of a failing run's
-- output (the failing ping's body). On by default, as it was shown on the
-- dashboard already; a job whose output may hold secrets turns it off.

-- +goose Up
ALTER TABLE monitors ADD COLUMN notify_output INTEGER NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE monitors DROP COLUMN notify_output;
