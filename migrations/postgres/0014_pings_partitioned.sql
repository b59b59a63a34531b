-- Pings partitioned by time, so that old pings leave with their month.
--
-- pings becomes a table partitioned by RANGE (at), one partition per
-- calendar month (UTC), named pings_pYYYYMM and made ahead of time by the
-- store (see pgstore/partitions.go). Pings older than VIGIL_KEEP_HISTORY
-- then go by dropping whole partitions: no DELETE, no dead rows, no vacuum
-- of a 100-million-row table (docs/benchmarks.md measures the difference).
-- The per-monitor count (VIGIL_KEEP_PINGS) is still kept by DELETE.
--
-- The existing table is not copied: it becomes the partition pings_legacy
-- for every instant before the start of the month after next (the
-- cutover), so the migration only changes the catalog. Its partition
-- constraint is proved by a CHECK constraint validated first, outside the
-- swap, with a lock that lets pings go on being written. The swap itself
-- (rename, new parent, attach) is one short transaction. A previous
-- release still running meanwhile keeps writing the same columns to the
-- table named pings and reserving IDs from pings_id_seq; the new sequence
-- starts a million past the old one, so IDs it reserved just before the
-- swap cannot collide. pings_default takes pings outside every partition
-- (a clock far off), so a ping is never refused for its time.
--
-- +goose NO TRANSACTION

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    cutover timestamptz := (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '2 months') AT TIME ZONE 'UTC';
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'pings'::regclass) = 'p' THEN
        RETURN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'pings_legacy_range' AND conrelid = 'pings'::regclass) THEN
        EXECUTE format('ALTER TABLE pings ADD CONSTRAINT pings_legacy_range CHECK (at < %L) NOT VALID', cutover);
    END IF;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
DO $$
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'pings'::regclass) = 'r' THEN
        ALTER TABLE pings VALIDATE CONSTRAINT pings_legacy_range;
    END IF;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
DO $$
DECLARE
    cutover timestamptz;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'pings'::regclass) = 'p' THEN
        RETURN;
    END IF;
    -- Locks in the order a ping's transaction takes them (its monitor,
    -- then pings), or the two could deadlock. EXCLUSIVE, because a ping's
    -- transaction first locks its monitor's row (FOR UPDATE: ROW SHARE,
    -- which a weaker mode lets through), then inserts into pings, then
    -- updates the monitor: with SHARE ROW EXCLUSIVE (what the new foreign
    -- key needs) the swap could hold monitors while that transaction held
    -- pings, each waiting for the other (the upgrade test saw it).
    LOCK TABLE monitors IN EXCLUSIVE MODE;
    LOCK TABLE pings IN ACCESS EXCLUSIVE MODE;
    SELECT (regexp_match(pg_get_constraintdef(oid), '''([^'']+)'''))[1]::timestamptz INTO cutover
        FROM pg_constraint WHERE conname = 'pings_legacy_range' AND conrelid = 'pings'::regclass;
    ALTER TABLE pings RENAME TO pings_legacy;
    ALTER INDEX pings_pkey RENAME TO pings_legacy_pkey;
    ALTER INDEX pings_monitor_idx RENAME TO pings_legacy_monitor_idx;
    ALTER TABLE pings_legacy RENAME CONSTRAINT pings_monitor_id_fkey TO pings_legacy_monitor_id_fkey;
    ALTER SEQUENCE pings_id_seq RENAME TO pings_legacy_id_seq;
    CREATE SEQUENCE pings_id_seq;
    PERFORM setval('pings_id_seq', (SELECT last_value FROM pings_legacy_id_seq) + 1000000);

    CREATE TABLE pings (LIKE pings_legacy INCLUDING DEFAULTS) PARTITION BY RANGE (at);
    ALTER TABLE pings ALTER COLUMN id SET DEFAULT nextval('pings_id_seq');
    ALTER SEQUENCE pings_id_seq OWNED BY pings.id;
    ALTER TABLE pings ADD CONSTRAINT pings_monitor_id_fkey
        FOREIGN KEY (monitor_id) REFERENCES monitors (id) ON DELETE CASCADE;
    -- IDs are unique per partition (each has a unique index on id, as
    -- pings_legacy has its primary key); a key across partitions would
    -- have to include at.
    CREATE INDEX pings_monitor_idx ON pings (monitor_id, id);
    EXECUTE format('ALTER TABLE pings ATTACH PARTITION pings_legacy FOR VALUES FROM (MINVALUE) TO (%L)', cutover);
    CREATE TABLE pings_default PARTITION OF pings DEFAULT;
    CREATE UNIQUE INDEX pings_default_id_idx ON pings_default (id);
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = 'pings'::regclass) = 'r' THEN
        RETURN;
    END IF;
    ALTER SEQUENCE pings_id_seq OWNED BY NONE;
    CREATE TABLE pings_plain (LIKE pings INCLUDING DEFAULTS);
    INSERT INTO pings_plain SELECT * FROM pings;
    DROP TABLE pings;
    ALTER TABLE pings_plain RENAME TO pings;
    ALTER TABLE pings ADD PRIMARY KEY (id);
    ALTER TABLE pings ADD CONSTRAINT pings_monitor_id_fkey
        FOREIGN KEY (monitor_id) REFERENCES monitors (id) ON DELETE CASCADE;
    CREATE INDEX pings_monitor_idx ON pings (monitor_id, id);
    ALTER SEQUENCE pings_id_seq OWNED BY pings.id;
END $$;
-- +goose StatementEnd
