package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/healthchecks"
	"github.com/vigilhq/vigil/healthchecks/healthcheckstest"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/server"
)

// TestHealthchecksMove moves a Healthchecks project to a running Vigil on
// each store: the import (as vigil import healthchecks runs it, beside the
// server, on the same database), then pings at the checks' UUIDs through
// Vigil's ping URLs, then the checks read back through Healthchecks' API
// as Vigil serves it.
func TestHealthchecksMove(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			dbURL := url(t)
			srv, err := server.New(ctx, testConfig(dbURL), testdb.Logger(t))
			require.NoError(t, err)
			require.NoError(t, srv.Listen())
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx) }()
			t.Cleanup(func() {
				cancel()
				require.NoError(t, <-done)
			})
			base, key := "http://"+srv.Addr(), srv.Bootstrapped.APIKey

			const nightly, hourly = "803f680d-e89b-492b-82ef-2be7b774a92d", "31365bce-8da9-4729-8ff3-aaa71d56b712"
			hc := healthcheckstest.New(t)
			hc.SetChecks(
				hc.Check(nightly, map[string]any{"name": "Database Backup", "slug": "database-backup", "tags": "db",
					"schedule": "15 5 * * *", "tz": "Europe/Riga", "grace": 1200, "manual_resume": true}),
				hc.Check(hourly, map[string]any{"name": "Filesystem Backup", "timeout": 3600, "grace": 600, "manual_resume": true}),
			)
			client, err := healthchecks.NewClient(hc.URL, hc.RWKey, nil)
			require.NoError(t, err)
			checks, err := client.Checks(ctx)
			require.NoError(t, err)
			ins, err := client.Integrations(ctx)
			require.NoError(t, err)
			store, err := server.OpenStore(ctx, dbURL, testdb.Logger(t))
			require.NoError(t, err)
			prjs, err := store.ProjectList(ctx)
			require.NoError(t, err)
			r, err := healthchecks.Import(ctx, store, &healthchecks.ImportParams{ProjectID: prjs[0].ID, Checks: checks,
				Integrations: ins, Now: time.Now()})
			require.NoError(t, err)
			require.Len(t, r.Made, 2)
			require.NoError(t, store.Close())

			// The lines that pinged https://hc-ping.com/<uuid> ping Vigil at
			// /ping/<uuid>, with Healthchecks' suffixes.
			for _, path := range []string{"/ping/" + hourly + "/start", "/ping/" + hourly, "/ping/" + nightly + "/0"} {
				status, body := get(t, base+path)
				require.Equal(t, http.StatusOK, status, "%s: %s", path, body)
				require.Equal(t, "OK", body)
			}

			hcGet := func(path string) map[string]any {
				req, err := http.NewRequest(http.MethodGet, base+path, nil)
				require.NoError(t, err)
				req.Header.Set("X-Api-Key", key)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
				var out map[string]any
				require.NoError(t, json.Unmarshal(b, &out), "%s", b)
				return out
			}
			got := hcGet("/api/v3/checks/" + hourly)
			require.Equal(t, "up", got["status"])
			require.EqualValues(t, 2, got["n_pings"])
			require.EqualValues(t, 3600, got["timeout"])
			require.True(t, strings.HasSuffix(got["ping_url"].(string), "/ping/"+hourly), got["ping_url"])
			got = hcGet("/api/v1/checks/" + nightly)
			require.Equal(t, "up", got["status"])
			require.Equal(t, "15 5 * * *", got["schedule"])
			require.Equal(t, "Europe/Riga", got["tz"])
			list := hcGet("/api/v1/checks/?tag=db")["checks"].([]any)
			require.Len(t, list, 1)
		})
	}
}
