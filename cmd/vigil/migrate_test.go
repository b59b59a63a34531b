package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/migrations"
)

// TestMigrateDryRun checks "vigil migrate up --dry-run" and "status" on
// both databases: before migrating, every migration of Vigil and of
// River is listed and nothing is written; after "up", nothing is left.
func TestMigrateDryRun(t *testing.T) {
	t.Parallel()
	names, err := migrations.Names(migrations.SQLite)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		url   func(testing.TB) string
		empty func(t *testing.T, url string) // the database holds nothing
	}{
		"sqlite": {testdb.SQLitePath, func(t *testing.T, url string) {
			_, err := os.Stat(url)
			require.ErrorIs(t, err, os.ErrNotExist, "a dry run does not create the file")
		}},
		"postgres": {testdb.PostgresURL, func(t *testing.T, url string) {
			conn, err := pgx.Connect(context.Background(), url)
			require.NoError(t, err)
			defer conn.Close(context.Background())
			var n int
			require.NoError(t, conn.QueryRow(context.Background(),
				`SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&n))
			require.Zero(t, n, "a dry run creates no table")
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := tc.url(t)
			env := map[string]string{"VIGIL_DATABASE_URL": url, "VIGIL_SECRET_KEY_FILE": testdb.KeyFile(url)}
			code, out, errOut := runVigil(t, env, "migrate", "up", "--dry-run")
			require.Equal(t, 0, code, errOut)
			for _, n := range names {
				require.Contains(t, out, "would apply "+n+"\n")
			}
			require.Regexp(t, `would apply river/001_`, out)
			tc.empty(t, env["VIGIL_DATABASE_URL"])

			code, out, errOut = runVigil(t, env, "migrate", "status")
			require.Equal(t, 0, code, errOut)
			require.Equal(t, strings.Count(out, "\n"), strings.Count(out, "pending\n"), "all pending:\n%s", out)

			code, _, errOut = runVigil(t, env, "migrate", "up")
			require.Equal(t, 0, code, errOut)
			code, out, errOut = runVigil(t, env, "migrate", "up", "--dry-run")
			require.Equal(t, 0, code, errOut)
			require.Equal(t, "nothing to apply: the database is up to date\n", out)
			code, out, errOut = runVigil(t, env, "migrate", "status")
			require.Equal(t, 0, code, errOut)
			require.NotRegexp(t, `(?m)pending$`, out)
			require.Regexp(t, `(?m)^0001_init.sql\s+applied 20\d\d-`, out)
			require.Regexp(t, `(?m)^river/001_\S+\s+applied$`, out)

			code, _, errOut = runVigil(t, env, "migrate", "status", "--dry-run")
			require.Equal(t, 2, code)
			require.Contains(t, errOut, "--dry-run goes with up")
		})
	}
}
