package migrations_test

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"

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
	pool, err := pgxpool.New(t.Context(), testdb.PostgresURL(t))
	require.NoError(t, err)
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	checkUpAndStatus(t, db, migrations.Postgres)
}
