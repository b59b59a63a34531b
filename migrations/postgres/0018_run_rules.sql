-- Rules for runs that report success but are wrong in other ways, each
-- off by default: min_runtime_seconds (a success faster than this opens a
-- too_fast incident), early_seconds (a cron or oncalendar run that starts
-- more than this before its occurrence opens an early incident), and
-- too_often ('alert': more successful runs than occurrences, or two
-- closer than half the interval, open a too_often incident).

-- +goose Up
ALTER TABLE monitors ADD COLUMN min_runtime_seconds bigint NOT NULL DEFAULT 0;
ALTER TABLE monitors ADD COLUMN early_seconds bigint NOT NULL DEFAULT 0;
ALTER TABLE monitors ADD COLUMN too_often text NOT NULL DEFAULT 'ignore';

-- +goose Down
ALTER TABLE monitors DROP COLUMN too_often;
ALTER TABLE monitors DROP COLUMN early_seconds;
ALTER TABLE monitors DROP COLUMN min_runtime_seconds;
