-- monitor_deadlines is kept by statement-level triggers: one set-based
-- statement per statement on monitors instead of a PL/pgSQL call and a
-- single-row UPDATE for every row.
--
-- With the row triggers of migration 0015, a batch of pings updated its
-- monitors in one statement and each of its rows called the trigger
-- function, which ran its own UPDATE (34 µs of execution a ping in
-- pg_stat_statements, an eighth of what a ping cost PostgreSQL in all).
-- Measured on an UPDATE of 20 monitors, as a batch makes it, 1,000 times:
-- the backend's CPU fell from 2.27 s to 1.90 s (medians of three), about
-- 18 µs a monitor (docs/benchmarks.md, Ingest, third round on
-- PostgreSQL). The triggers stay in the database, not in
-- the store's code, for 0015's reason: a previous release still running
-- during a rollout writes only monitors, and they keep monitor_deadlines
-- right for it too.
--
-- The update trigger reads the new rows of the statement (a transition
-- table) and writes the deadline of each monitor whose row in
-- monitor_deadlines differs, which is the row trigger's rule (write when
-- next_deadline or paused changed) judged against what is stored. A
-- trigger with a transition table cannot name columns (UPDATE OF ...), so
-- it runs after every UPDATE of monitors; one that changes no deadline
-- writes nothing. Deleting a monitor still removes its row through the
-- foreign key's ON DELETE CASCADE.
--
-- The function's UPDATE is planned once per connection and the plan kept
-- (PL/pgSQL caches it; nothing in it is a parameter). Planned while
-- monitor_deadlines looked small, or for a statement that changed many
-- monitors, it would be a hash join over a sequential scan of
-- monitor_deadlines, and every later batch of a few pings would pay a scan
-- of the whole table (measured: 2.8 ms for 20 pings at 2,000 monitors,
-- against 1.2 ms with the index). The function turns hash and merge joins
-- and sequential scans off for its own statement (SET on the function), so
-- that it always looks each changed monitor up by monitor_deadlines'
-- primary key.
--
-- The new triggers are made and the old ones dropped in one transaction,
-- which first takes the lock that dropping a trigger needs (ACCESS
-- EXCLUSIVE), before any weaker one, as 0015 does: an evaluator of the
-- previous release that holds claimed rows and then updates them would
-- otherwise deadlock with the lock's upgrade. No statement on monitors
-- runs with both sets of triggers or with neither; the lock is held for a
-- moment only (nothing is copied).

-- +goose Up
LOCK TABLE monitors IN ACCESS EXCLUSIVE MODE;

-- +goose StatementBegin
CREATE FUNCTION monitor_deadlines_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO monitor_deadlines (monitor_id, due_at)
    SELECT id, CASE WHEN paused THEN NULL ELSE next_deadline END FROM monitor_deadlines_new;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION monitor_deadlines_updated() RETURNS trigger LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off AS $$
BEGIN
    UPDATE monitor_deadlines d SET due_at = CASE WHEN n.paused THEN NULL ELSE n.next_deadline END
    FROM monitor_deadlines_new n
    WHERE d.monitor_id = n.id AND d.due_at IS DISTINCT FROM CASE WHEN n.paused THEN NULL ELSE n.next_deadline END;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER monitor_deadlines_inserted AFTER INSERT ON monitors
    REFERENCING NEW TABLE AS monitor_deadlines_new
    FOR EACH STATEMENT EXECUTE FUNCTION monitor_deadlines_inserted();
CREATE TRIGGER monitor_deadlines_updated AFTER UPDATE ON monitors
    REFERENCING NEW TABLE AS monitor_deadlines_new
    FOR EACH STATEMENT EXECUTE FUNCTION monitor_deadlines_updated();

DROP TRIGGER monitor_deadlines_update ON monitors;
DROP TRIGGER monitor_deadlines_insert ON monitors;
DROP FUNCTION monitor_deadlines_update();
DROP FUNCTION monitor_deadlines_insert();

-- +goose Down
LOCK TABLE monitors IN ACCESS EXCLUSIVE MODE;

-- +goose StatementBegin
CREATE FUNCTION monitor_deadlines_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO monitor_deadlines (monitor_id, due_at)
    VALUES (NEW.id, CASE WHEN NEW.paused THEN NULL ELSE NEW.next_deadline END);
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION monitor_deadlines_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE monitor_deadlines SET due_at = CASE WHEN NEW.paused THEN NULL ELSE NEW.next_deadline END
    WHERE monitor_id = NEW.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER monitor_deadlines_insert AFTER INSERT ON monitors
    FOR EACH ROW EXECUTE FUNCTION monitor_deadlines_insert();
CREATE TRIGGER monitor_deadlines_update AFTER UPDATE OF next_deadline, paused ON monitors
    FOR EACH ROW WHEN (OLD.next_deadline IS DISTINCT FROM NEW.next_deadline OR OLD.paused IS DISTINCT FROM NEW.paused)
    EXECUTE FUNCTION monitor_deadlines_update();

DROP TRIGGER monitor_deadlines_updated ON monitors;
DROP TRIGGER monitor_deadlines_inserted ON monitors;
DROP FUNCTION monitor_deadlines_updated();
DROP FUNCTION monitor_deadlines_inserted();
