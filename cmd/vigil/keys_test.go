package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

func TestKeys(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dbURL := url(t)
			db := map[string]string{"VIGIL_DATABASE_URL": dbURL}

			code, out, errOut := runVigil(t, db, "keys", "create")
			require.Equal(t, 1, code)
			require.Empty(t, out)
			require.Contains(t, errOut, "no project yet")

			store, err := server.OpenStore(ctx, dbURL, testdb.Logger(t))
			require.NoError(t, err)
			first, err := store.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "Default",
				PingKey: keys.NewProjectPingKey(), Now: time.Now().Add(-time.Hour)})
			require.NoError(t, err)
			other, err := store.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "Other",
				PingKey: keys.NewProjectPingKey(), Now: time.Now()})
			require.NoError(t, err)
			require.NoError(t, store.Close())

			// create prints the key alone; --database works like the variable.
			code, out, errOut = runVigil(t, nil, "keys", "create", "--database", dbURL)
			require.Equal(t, 0, code, errOut)
			require.Regexp(t, regexp.MustCompile(`^vk_[A-Za-z0-9_-]{43}\n$`), out)
			rw := strings.TrimSpace(out)
			require.Contains(t, errOut, `read-write API key`)
			require.Contains(t, errOut, `"Default", the oldest of 2`)

			code, out, errOut = runVigil(t, db, "keys", "create", "--read-only", "--name", "dashboards", "--project", "Other")
			require.Equal(t, 0, code, errOut)
			ro := strings.TrimSpace(out)
			code, out, errOut = runVigil(t, db, "keys", "create", "--project", other.ID)
			require.Equal(t, 0, code, errOut)
			otherRW := strings.TrimSpace(out)

			store, err = server.OpenStore(ctx, dbURL, testdb.Logger(t))
			require.NoError(t, err)
			k, err := store.APIKeyGetByHash(ctx, keys.HashAPIKey(rw))
			require.NoError(t, err)
			require.Equal(t, first.ID, k.ProjectID)
			require.False(t, k.ReadOnly)
			k, err = store.APIKeyGetByHash(ctx, keys.HashAPIKey(ro))
			require.NoError(t, err)
			require.Equal(t, other.ID, k.ProjectID)
			require.True(t, k.ReadOnly)
			require.Equal(t, "dashboards", k.Name)
			require.NoError(t, store.Close())

			// The keys work against a real server on the same database.
			srv, err := server.New(ctx, server.Config{DatabaseURL: dbURL, Listen: "127.0.0.1:0", LogLevel: "info",
				LogFormat: "text", KeepPings: 100, KeepRuns: 100, PruneInterval: time.Minute, SecretKeyFile: testdb.KeyFile(dbURL)}, testdb.Logger(t))
			require.NoError(t, err)
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			defer srv.Store().Close()
			call := func(method, key string) int {
				req, err := http.NewRequest(method, hs.URL+"/api/v1/monitors", strings.NewReader(`{"name":"job"}`))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				return resp.StatusCode
			}
			require.Equal(t, http.StatusCreated, call(http.MethodPost, rw))
			require.Equal(t, http.StatusOK, call(http.MethodGet, ro))
			require.Equal(t, http.StatusForbidden, call(http.MethodPost, ro))
			require.Equal(t, http.StatusCreated, call(http.MethodPost, otherRW), "its own project")

			code, out, errOut = runVigil(t, db, "keys", "list", "--project", "Other")
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, ro[:9]+"…")
			require.Contains(t, out, "read-only")
			require.Contains(t, out, "dashboards")
			require.NotContains(t, out, rw[:9], "only the project's keys")
			require.NotContains(t, out, ro, "never the key itself")

			// Revoke by the prefix list shows, flags after the key.
			code, out, errOut = runVigil(t, db, "keys", "revoke", ro[:9]+"…", "--project", "Other")
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "revoked API key")
			require.Equal(t, http.StatusUnauthorized, call(http.MethodGet, ro))
			code, out, _ = runVigil(t, db, "keys", "revoke", "--project", "Other", ro[:9])
			require.Equal(t, 0, code)
			require.Contains(t, out, "already revoked")
			code, out, _ = runVigil(t, db, "keys", "list", "--project", "Other")
			require.Equal(t, 0, code)
			require.Contains(t, out, "revoked 20")

			for _, bad := range []struct {
				args []string
				code int
				msg  string
			}{
				{[]string{"keys"}, 2, "give an action"},
				{[]string{"keys", "rotate"}, 2, `unknown action "rotate"`},
				{[]string{"keys", "revoke"}, 2, "give the ID or the prefix"},
				{[]string{"keys", "list", "extra"}, 2, `unexpected argument "extra"`},
				{[]string{"keys", "list", "--read-only"}, 2, "for create"},
				{[]string{"keys", "create", "--project", "Nope"}, 1, `no project has the ID or name "Nope"`},
				{[]string{"keys", "revoke", "vk_nothing"}, 1, `no API key with the ID or prefix "vk_nothing"`},
				// The dashboard's rule for a key's name, kept by the command too.
				{[]string{"keys", "create", "--name", strings.Repeat("k", 201)}, 1, "name: say what the key is for, in at most 200 characters"},
			} {
				code, out, errOut := runVigil(t, db, bad.args...)
				require.Equal(t, bad.code, code, "%v: %s", bad.args, errOut)
				require.Empty(t, out, "%v", bad.args)
				require.Contains(t, errOut, bad.msg, "%v", bad.args)
			}
		})
	}
}
