package testdb

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestWithSearchPath(t *testing.T) {
	t.Parallel()
	got, err := withSearchPath("postgres://u@h:5432/db?sslmode=disable", "s1")
	require.NoError(t, err)
	require.Equal(t, "postgres://u@h:5432/db?search_path=s1&sslmode=disable", got)
	got, err = withSearchPath("host=h dbname=db", "s1")
	require.NoError(t, err)
	require.Equal(t, "host=h dbname=db search_path=s1", got)
}

func TestPostgresURL(t *testing.T) {
	t.Parallel()
	if os.Getenv(PostgresURLEnv) == "" {
		PostgresURL(t) // skips, or fails when CI=true
	}
	ctx := context.Background()
	var schema string
	t.Run("inner", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, PostgresURL(t))
		require.NoError(t, err)
		defer conn.Close(ctx)
		require.NoError(t, conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema))
		require.Regexp(t, `^vigil_test_[0-9a-f]{16}$`, schema)
	})
	conn, err := pgx.Connect(ctx, os.Getenv(PostgresURLEnv))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var exists bool
	require.NoError(t, conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists))
	require.False(t, exists, "the schema is dropped when the test ends")
}

// recorder is a testing.TB that records Skip and Fatal instead of ending
// the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

type stop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	panic(stop{})
}
func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	panic(stop{})
}

func runRecorded(t *testing.T) *recorder {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(stop); !ok {
					panic(v)
				}
			}
		}()
		PostgresURL(r)
	}()
	return r
}

func TestPostgresURLWithoutDatabase(t *testing.T) {
	t.Setenv(PostgresURLEnv, "")
	t.Setenv("CI", "")
	r := runRecorded(t)
	require.Contains(t, r.skipped, PostgresURLEnv)
	require.Empty(t, r.failed)

	t.Setenv("CI", "true")
	r = runRecorded(t)
	require.Equal(t, "VIGIL_TEST_POSTGRES_URL must be set when CI=true", r.failed)
	require.Empty(t, r.skipped)
}

func TestStores(t *testing.T) {
	for name, open := range Stores() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			require.NoError(t, s.Ping(t.Context()))
		})
	}
}
