-- Per channel: whether it gets the monitor.late warning (notify_late), and
-- how long incidents of one project that open together are gathered into
-- one incidents.grouped message (group_seconds, 0: each alone). Chat and
-- e-mail channels gather for 30 s by default; webhooks, PagerDuty and
-- Opsgenie send each incident alone.
--
-- A delivery of incident.opened to a channel that gathers carries the
-- instant its group goes out (group_at): every delivery of that channel
-- with the same group_at is one group, sent once, by the job of its
-- lowest delivery ID.

-- +goose Up
ALTER TABLE channels ADD COLUMN notify_late INTEGER NOT NULL DEFAULT 0;
ALTER TABLE channels ADD COLUMN group_seconds INTEGER NOT NULL DEFAULT 0;
UPDATE channels SET group_seconds = 30 WHERE kind IN ('slack', 'email', 'discord', 'teams', 'telegram', 'ntfy');
ALTER TABLE deliveries ADD COLUMN group_at INTEGER;
CREATE INDEX deliveries_group_idx ON deliveries (channel_id, group_at, id)
    WHERE state = 'pending' AND group_at IS NOT NULL;

-- +goose Down
DROP INDEX deliveries_group_idx;
ALTER TABLE deliveries DROP COLUMN group_at;
ALTER TABLE channels DROP COLUMN group_seconds;
ALTER TABLE channels DROP COLUMN notify_late;
