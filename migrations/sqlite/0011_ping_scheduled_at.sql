-- The scheduled fire time of the occurrence a ping's run belongs to, when
-- the job said (the scheduled_at ping parameter), kept with the ping so the
-- history shows which occurrence each attempt served. Microseconds since
-- the Unix epoch, as every time column here.

-- +goose Up
ALTER TABLE pings ADD COLUMN scheduled_at INTEGER;

-- +goose Down
ALTER TABLE pings DROP COLUMN scheduled_at;
