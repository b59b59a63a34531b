package migrations_test

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/migrations"
)

func TestNamesMatchAcrossDialects(t *testing.T) {
	t.Parallel()
	pg, err := migrations.Names(migrations.Postgres)
	require.NoError(t, err)
	lite, err := migrations.Names(migrations.SQLite)
	require.NoError(t, err)
	require.NotEmpty(t, pg)
	require.Equal(t, pg, lite, "every migration is written for both databases, under one name")
	require.Equal(t, "0001_init.sql", pg[0])
}

func TestUnknownDialect(t *testing.T) {
	t.Parallel()
	_, err := migrations.Names("mysql")
	require.Error(t, err)
}

func checkUpAndStatus(t *testing.T, db *sql.DB, d migrations.Dialect) {
	ctx := t.Context()
	st, err := migrations.Status(ctx, db, d)
	require.NoError(t, err)
	require.NotEmpty(t, st)
	for _, s := range st {
		require.False(t, s.Applied, s.Name)
	}

	require.NoError(t, migrations.Up(ctx, db, d))
	require.NoError(t, migrations.Up(ctx, db, d), "up again is a no-op")
	st, err = migrations.Status(ctx, db, d)
	require.NoError(t, err)
	names, err := migrations.Names(d)
	require.NoError(t, err)
	require.Len(t, st, len(names))
	for i, s := range st {
		require.True(t, s.Applied, s.Name)
		require.False(t, s.AppliedAt.IsZero())
		require.Equal(t, names[i], s.Name)
		v, err := strconv.ParseInt(strings.SplitN(s.Name, "_", 2)[0], 10, 64)
		require.NoError(t, err)
		require.Equal(t, v, s.Version, "the version is the name's number")
	}
	var n int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM monitors").Scan(&n))
	require.Zero(t, n)
}

func TestSQLite(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", testdb.SQLitePath(t))
	require.NoError(t, err)
	defer db.Close()
	checkUpAndStatus(t, db, migrations.SQLite)
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	db, _ := openPostgres(t)
	checkUpAndStatus(t, db, migrations.Postgres)
}

// migratedPostgres opens a new test database with every migration
// applied, as a pool and as a database/sql handle on it.
func migratedPostgres(t *testing.T) (*pgxpool.Pool, *sql.DB) {
	t.Helper()
	db, pool := openPostgres(t)
	require.NoError(t, migrations.Up(t.Context(), db, migrations.Postgres))
	return pool, db
}

// openPostgres opens a new test database, as a database/sql handle and
// as the pool under it, closed when t ends.
func openPostgres(t *testing.T) (*sql.DB, *pgxpool.Pool) {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), testdb.PostgresURL(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { _ = db.Close() })
	return db, pool
}

// undoDownTo applies the Down of migration version of dialect, after the
// Down of every later migration (goose applies no migration below the
// newest applied one).
func undoDownTo(t *testing.T, db *sql.DB, dialect migrations.Dialect, version int64) {
	t.Helper()
	names, err := migrations.Names(dialect)
	require.NoError(t, err)
	for i := len(names) - 1; i >= 0; i-- {
		v, err := strconv.ParseInt(strings.SplitN(names[i], "_", 2)[0], 10, 64)
		require.NoError(t, err)
		if v < version {
			break
		}
		require.NoError(t, migrations.Undo(t.Context(), db, dialect, v), names[i])
	}
}

// TestPostgresPingRunTriggers checks migration 0026 on a database that
// holds pings and runs: Up keeps them and leaves pings (every partition)
// and runs without a foreign key to monitors, the delete trigger taking
// their place; Down deletes the rows whose monitor is gone and adds the
// foreign keys back; Up again keeps the rows, and deleting a project takes
// its monitors' pings and runs.
func TestPostgresPingRunTriggers(t *testing.T) {
	t.Parallel()
	const version = 26
	ctx := t.Context()
	_, db := migratedPostgres(t)

	exec := func(q string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, q, args...)
		require.NoError(t, err, q)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		require.NoError(t, db.QueryRowContext(ctx, q).Scan(&n), q)
		return n
	}
	// The foreign keys to monitors of pings, its partitions and runs.
	foreignKeys := func() int {
		return count(`SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND confrelid = 'monitors'::regclass
			AND (conrelid = 'runs'::regclass OR conrelid IN (SELECT relid FROM pg_partition_tree('pings')))`)
	}
	trigger := func() int {
		return count(`SELECT count(*) FROM pg_trigger WHERE tgrelid = 'monitors'::regclass AND tgname = 'monitors_deleted_history'`)
	}
	require.Zero(t, foreignKeys(), "pings and runs have no foreign key to monitors")
	require.Equal(t, 1, trigger())

	exec(`INSERT INTO projects (id, name, ping_key, created_at) VALUES ('p1', 'p', 'pk1', now())`)
	for _, id := range []string{"m1", "m2"} {
		exec(`INSERT INTO monitors (id, project_id, name, slug, schedule_kind, grace_seconds, alert_on_failure,
				failure_threshold, recovery_threshold, overlap, ping_key, created_at, updated_at, status, state)
			VALUES ($1, 'p1', $1, $1, 'interval', 60, 'always', 1, 1, 'allow', 'key-' || $1, now(), now(), 'new', '{}')`, id)
		// A ping of the legacy partition, of a monthly one and of the
		// default one (a clock far off), and two runs.
		exec(`INSERT INTO pings (monitor_id, kind, at) VALUES ($1, 'success', '2000-01-01'), ($1, 'success', now()),
			($1, 'success', '2199-01-01')`, id)
		exec(`INSERT INTO runs (monitor_id, seq) VALUES ($1, 1), ($1, 2)`, id)
	}
	// Rows of a monitor that does not exist, which only a hand could write
	// while the foreign keys are off.
	exec(`INSERT INTO pings (monitor_id, kind, at) VALUES ('gone', 'success', now())`)
	exec(`INSERT INTO runs (monitor_id, seq) VALUES ('gone', 1)`)

	undoDownTo(t, db, migrations.Postgres, version)
	require.Equal(t, 2+count(`SELECT count(*) FROM pg_partition_tree('pings') WHERE isleaf`), foreignKeys(),
		"Down adds the foreign keys back, on every partition of pings")
	require.Zero(t, trigger(), "and drops the trigger")
	require.Equal(t, 6, count(`SELECT count(*) FROM pings`), "the pings of monitors that exist are kept, the others deleted")
	require.Equal(t, 4, count(`SELECT count(*) FROM runs`), "likewise the runs")
	_, err := db.ExecContext(ctx, `INSERT INTO pings (monitor_id, kind, at) VALUES ('gone', 'success', now())`)
	require.ErrorContains(t, err, "pings_monitor_id_fkey", "the foreign key holds again")

	require.NoError(t, migrations.Up(ctx, db, migrations.Postgres))
	require.Zero(t, foreignKeys())
	require.Equal(t, 1, trigger())
	require.Equal(t, 6, count(`SELECT count(*) FROM pings`), "Up keeps every ping")
	require.Equal(t, 4, count(`SELECT count(*) FROM runs`), "and every run")

	exec(`DELETE FROM monitors WHERE id = 'm1'`)
	require.Equal(t, 3, count(`SELECT count(*) FROM pings`), "a monitor's pings go with it")
	require.Equal(t, 2, count(`SELECT count(*) FROM runs`), "and its runs")
	exec(`DELETE FROM projects WHERE id = 'p1'`)
	require.Zero(t, count(`SELECT count(*) FROM pings`), "a project's monitors' pings go with them")
	require.Zero(t, count(`SELECT count(*) FROM runs`))
}

// TestSQLiteKeepsPingRunForeignKeys checks that on SQLite pings and runs
// keep their foreign keys to monitors, with ON DELETE CASCADE (migration
// 0026 changes them on PostgreSQL only).
func TestSQLiteKeepsPingRunForeignKeys(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := sql.Open("sqlite", testdb.SQLitePath(t))
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, migrations.Up(ctx, db, migrations.SQLite))
	for _, table := range []string{"pings", "runs"} {
		var parent, onDelete string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT "table", on_delete FROM pragma_foreign_key_list(?) WHERE "from" = 'monitor_id'`,
			table).Scan(&parent, &onDelete), table)
		require.Equal(t, "monitors", parent, table)
		require.Equal(t, "CASCADE", onDelete, table)
	}
}

// TestPostgresFewerChecksLockOrder checks that migration 0027 waits for a
// ping's batch of a replica still serving without deadlocking with it:
// the batch holds monitors (its load's FOR UPDATE) and then reads
// projects, as the load statement does, while the migration is waiting.
func TestPostgresFewerChecksLockOrder(t *testing.T) {
	t.Parallel()
	const version = 27
	ctx := t.Context()
	pool, db := migratedPostgres(t)
	undoDownTo(t, db, migrations.Postgres, version)

	batch, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = batch.Rollback(ctx) }()
	_, err = batch.Exec(ctx, `SELECT id FROM monitors FOR UPDATE`)
	require.NoError(t, err)

	migrated := make(chan error, 1)
	go func() { migrated <- migrations.Up(ctx, db, migrations.Postgres) }()
	require.Eventually(t, func() bool {
		var waiting int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks
			WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting)
		return err == nil && waiting > 0
	}, 15*time.Second, 5*time.Millisecond, "the migration waits for the batch")

	// deadlock_timeout (1 s by default) passes before PostgreSQL looks for
	// a cycle; a statement timeout well beyond it ends a plain wait.
	_, err = batch.Exec(ctx, `SET LOCAL statement_timeout = '10s'`)
	require.NoError(t, err)
	var n int
	require.NoError(t, batch.QueryRow(ctx, `SELECT count(*) FROM projects`).Scan(&n), "the batch reads projects while the migration waits")
	require.NoError(t, batch.Commit(ctx))
	require.NoError(t, <-migrated)
}
