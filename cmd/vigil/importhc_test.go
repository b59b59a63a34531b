package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/healthchecks/healthcheckstest"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// TestImportHealthchecks runs vigil import healthchecks against a stand-in
// for Healthchecks' API v3, on both stores: a dry run, the import, a
// second run that changes nothing, and failures of Healthchecks that
// write nothing.
func TestImportHealthchecks(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dbURL := url(t)
			db := map[string]string{"VIGIL_DATABASE_URL": dbURL, "VIGIL_SECRET_KEY_FILE": testdb.KeyFile(dbURL)}
			hc := healthcheckstest.New(t)
			const uuid = "803f680d-e89b-492b-82ef-2be7b774a92d"
			hc.SetChecks(
				hc.Check(uuid, map[string]any{"name": "Database Backup", "slug": "database-backup", "tags": "production db",
					"desc": "Runs ~/db-backup.sh", "grace": 1200, "status": "down", "manual_resume": true,
					"channels": "4ec5a071-2d08-4baa-898a-eb4eb3cd6941", "schedule": "15 5 * * *", "tz": "Europe/Riga"}),
				hc.Check("31365bce-8da9-4729-8ff3-aaa71d56b712", map[string]any{"name": "Filesystem Backup", "timeout": 3600,
					"manual_resume": true}),
			)
			hc.SetIntegrations(map[string]any{"id": "4ec5a071-2d08-4baa-898a-eb4eb3cd6941", "name": "My Phone", "kind": "sms"})

			count := func() int {
				store, err := server.OpenStore(ctx, dbURL, testdb.Logger(t))
				require.NoError(t, err)
				defer store.Close()
				prjs, err := store.ProjectList(ctx)
				require.NoError(t, err)
				n := 0
				for _, p := range prjs {
					ms, err := store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: p.ID, Now: time.Now()})
					require.NoError(t, err)
					n += len(ms)
				}
				return n
			}

			args := func(extra ...string) []string {
				return append([]string{"import", "healthchecks", "--url", hc.URL}, extra...)
			}
			code, _, errOut := runVigil(t, db, args("--api-key", hc.RWKey)...)
			require.Equal(t, 1, code)
			require.Contains(t, errOut, "no project yet")

			code, out, errOut := runVigil(t, db, args("--api-key", hc.RWKey, "--project", "Imported", "--create-project", "--dry-run")...)
			require.Equal(t, 2, code, out)
			require.Contains(t, errOut, "--dry-run writes nothing")

			// The key from the environment; a dry run first.
			store, err := server.OpenStore(ctx, dbURL, testdb.Logger(t))
			require.NoError(t, err)
			dflt, err := store.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "Default",
				PingKey: keys.NewProjectPingKey(), Now: time.Now()})
			require.NoError(t, err)
			require.NoError(t, store.Close())
			// A channel, its config encrypted: the import reads the
			// project's channels, so it needs the secret key file.
			sealed, _, err := server.OpenSealedStore(ctx, dbURL, db["VIGIL_SECRET_KEY_FILE"], testdb.Logger(t))
			require.NoError(t, err)
			_, err = sealed.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: keys.NewID(), ProjectID: dflt.ID, Kind: "webhook",
				Name: "hook", Config: json.RawMessage(`{"url":"https://hooks.example.com/x","secret":"s3cret"}`), Now: time.Now()})
			require.NoError(t, err)
			require.NoError(t, sealed.Close())
			env := map[string]string{"VIGIL_DATABASE_URL": dbURL, "VIGIL_SECRET_KEY_FILE": testdb.KeyFile(dbURL), "HEALTHCHECKS_API_KEY": hc.RWKey}
			code, out, errOut = runVigil(t, env, args("--dry-run")...)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "Read 2 checks and 1 integrations from "+hc.URL)
			require.Contains(t, out, "would make     Database Backup (database-backup, uuid "+uuid+")")
			require.Contains(t, out, `integration "My Phone" (sms): not imported: Vigil has no sms channels`)
			require.Contains(t, out, "would make 2, would change 0, would skip 0, unchanged 0.")
			require.Contains(t, out, "Dry run: nothing was written.")
			require.Equal(t, 0, count())

			code, out, errOut = runVigil(t, env, args()...)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "made     Database Backup (database-backup, uuid "+uuid+")")
			require.Contains(t, out, "made 2, changed 0, skipped 0, unchanged 0.")
			require.Equal(t, 2, count())
			store, err = server.OpenStore(ctx, dbURL, testdb.Logger(t))
			require.NoError(t, err)
			m, err := store.MonitorGetByPingKey(ctx, uuid)
			require.NoError(t, err)
			require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "15 5 * * *", TZ: "Europe/Riga",
				Dialect: monitors.DialectCronie}, m.Schedule)
			require.NoError(t, store.Close())

			code, out, errOut = runVigil(t, env, args()...)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "made 0, changed 0, skipped 0, unchanged 2.")

			// Integrations the key may not read: the checks still come.
			hc.Fail("/api/v3/channels/", http.StatusForbidden)
			code, out, errOut = runVigil(t, env, args()...)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "Read 2 checks and no integrations")
			require.Contains(t, out, "Integrations: integrations not read (Healthchecks answered GET /api/v3/channels/ with 403 Forbidden")
			hc.Fail("/api/v3/channels/", 0)

			// Failures write nothing.
			hc.SetChecks(hc.Check("7918b17b-a745-4db1-8575-9d2e07c97f79", map[string]any{"name": "New one"}))
			for _, tc := range []struct {
				setup func()
				args  []string
				want  string
			}{
				{func() {}, args("--api-key", "wrong"), "Healthchecks answered GET /api/v3/checks/ with 401 Unauthorized: wrong api key"},
				{func() {}, args("--api-key", hc.ROKey), "the API key is read-only"},
				{func() { hc.Fail("/api/v3/channels/", http.StatusServiceUnavailable) }, args(),
					"Healthchecks answered GET /api/v3/channels/ with 503 Service Unavailable: <h1>Server Error (500)</h1>"},
				{func() { hc.Fail("/api/v3/checks/", http.StatusInternalServerError) }, args(), "with 500 Internal Server Error"},
				{func() { hc.Close() }, args(), "reach Healthchecks at " + hc.URL},
			} {
				tc.setup()
				code, out, errOut := runVigil(t, env, tc.args...)
				require.Equal(t, 1, code, out)
				require.Contains(t, errOut, tc.want)
				require.Equal(t, 2, count(), "nothing written after %q", tc.want)
			}

			code, _, errOut = runVigil(t, env, "import", "healthchecks", "--api-key", "k")
			require.Equal(t, 2, code)
			require.Contains(t, errOut, "--url")
			code, _, errOut = runVigil(t, db, "import", "healthchecks", "--url", "https://hc.example.com")
			require.Equal(t, 2, code)
			require.Contains(t, errOut, "--api-key")
			code, _, _ = runVigil(t, db, "import", "cronitor")
			require.Equal(t, 2, code)
		})
	}
}
