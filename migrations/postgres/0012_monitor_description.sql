-- A monitor's description: free text for the people who read it, such as
-- what the job does and whom to call. Healthchecks.io calls it desc; the
-- import and the Healthchecks-compatible API keep it here.

-- +goose Up
ALTER TABLE monitors ADD COLUMN description TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE monitors DROP COLUMN description;
