-- Pings partitioned by time (PostgreSQL only).
--
-- SQLite has no partitions: pings older than VIGIL_KEEP_HISTORY are
-- deleted in bounded chunks, oldest first (plan.Scripts.PingPrune), which
-- a single-file database reclaims without a vacuum of its own. The
-- migration exists so that both dialects keep one list of names.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
