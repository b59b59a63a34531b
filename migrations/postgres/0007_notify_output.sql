-- Whether a monitor's notifications carry the tail of a failing run's
-- output (the failing ping's body). On by default, as it was shown on the
-- dashboard already; a job whose output may hold secrets turns it off.

-- +goose Up
ALTER TABLE monitors ADD COLUMN notify_output boolean NOT NULL DEFAULT true;

-- +goose Down
ALTER TABLE monitors DROP COLUMN notify_output;
