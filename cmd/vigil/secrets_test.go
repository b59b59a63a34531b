package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/secrets"
	"github.com/vigilhq/vigil/server"
)

const rotateSecret = "whsec-rotate-me"

// TestSecretsRotate runs "vigil secrets rotate" on each store while a
// server serves on the same database: every channel config is then sealed
// under the new key, the key file holds only that key, and the server
// reads the configs and seals new ones under the new key without a
// restart.
func TestSecretsRotate(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{
		"sqlite":   testdb.SQLitePath,
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dbURL := url(t)
			env := map[string]string{"VIGIL_DATABASE_URL": dbURL, "VIGIL_SECRET_KEY_FILE": testdb.KeyFile(dbURL)}
			keyFile, err := server.SecretKeyFile(dbURL, env["VIGIL_SECRET_KEY_FILE"])
			require.NoError(t, err)

			srv, err := server.New(ctx, server.Config{DatabaseURL: dbURL, Listen: "127.0.0.1:0", LogLevel: "info",
				LogFormat: "text", KeepPings: 100, KeepRuns: 100, PruneInterval: time.Minute, SecretKeyFile: env["VIGIL_SECRET_KEY_FILE"]},
				testdb.Logger(t))
			require.NoError(t, err)
			defer srv.Store().Close()
			st := srv.Store()
			prj := srv.Bootstrapped.Project
			create := func(name string) *monitors.Channel {
				ch, err := st.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: "ch_" + name, ProjectID: prj.ID, Kind: "webhook", Name: name,
					Config: json.RawMessage(`{"url":"https://hooks.example.com/` + name + `","secret":"` + rotateSecret + `"}`)})
				require.NoError(t, err)
				return ch
			}
			a, b := create("a"), create("b")
			before, err := secrets.Load(keyFile)
			require.NoError(t, err)
			oldID := before.Current()
			oldFile, err := os.ReadFile(keyFile)
			require.NoError(t, err)

			code, out, errOut := runVigil(t, env, "secrets", "rotate")
			require.Equal(t, 0, code, errOut)
			after, err := secrets.Load(keyFile)
			require.NoError(t, err)
			newID := after.Current()
			require.NotEqual(t, oldID, newID)
			require.Contains(t, out, "new key "+newID)
			require.Contains(t, out, "re-encrypted 2 channel configs")
			require.Contains(t, out, "removed the old keys "+oldID)
			body, err := os.ReadFile(keyFile)
			require.NoError(t, err)
			require.Equal(t, 1, strings.Count(string(body), "\nk"), "only the new key is left:\n%s", body)
			fi, err := os.Stat(keyFile)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

			// The serving store reads them and seals under the new key.
			for _, ch := range []*monitors.Channel{a, b, create("c")} {
				got, err := st.ChannelGet(ctx, prj.ID, ch.ID)
				require.NoError(t, err)
				require.Contains(t, string(got.Config), rotateSecret)
			}
			// A store with only the new key opens every config: nothing is
			// left under the old one.
			fresh, err := server.OpenStoreWithKeys(ctx, dbURL, after, testdb.Logger(t))
			require.NoError(t, err)
			list, err := fresh.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: prj.ID})
			require.NoError(t, err)
			require.Len(t, list, 3)
			require.NoError(t, fresh.Close())
			// The key file from before opens nothing.
			stale := filepath.Join(t.TempDir(), "stale.key")
			require.NoError(t, os.WriteFile(stale, oldFile, 0o600))
			_, _, err = server.OpenSealedStore(ctx, dbURL, stale, testdb.Logger(t))
			require.ErrorIs(t, err, secrets.ErrUnknownKey)
		})
	}
}

// TestSecretsRefuses checks what "vigil secrets" will not do: rotate a
// file that is not the database's (changing nothing), init over a key
// file, or rotate without one.
func TestSecretsRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "vigil.db")
	env := map[string]string{"VIGIL_DATABASE_URL": db}
	code, _, errOut := runVigil(t, env, "secrets", "rotate")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no key file at "+db+".key")

	code, out, errOut := runVigil(t, env, "secrets", "init")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "created "+db+".key")
	code, _, errOut = runVigil(t, env, "secrets", "init")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "never replaces a key file")

	st, err := server.OpenStore(context.Background(), db, testdb.Logger(t))
	require.NoError(t, err)
	prj, err := st.ProjectCreate(context.Background(), &monitors.ProjectCreateParams{ID: "prj_1", Name: "p", PingKey: "pk_abcdefabcdefabcdef"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	kr, err := secrets.Load(db + ".key")
	require.NoError(t, err)
	sealed, err := server.OpenStoreWithKeys(context.Background(), db, kr, testdb.Logger(t))
	require.NoError(t, err)
	_, err = sealed.ChannelCreate(context.Background(), &monitors.ChannelCreateParams{ID: "ch_1", ProjectID: prj.ID, Kind: "webhook", Name: "a",
		Config: json.RawMessage(`{"url":"https://hooks.example.com/a"}`)})
	require.NoError(t, err)
	require.NoError(t, sealed.Close())

	other := filepath.Join(dir, "other.key")
	_, err = secrets.Create(other)
	require.NoError(t, err)
	was, err := os.ReadFile(other)
	require.NoError(t, err)
	code, _, errOut = runVigil(t, map[string]string{"VIGIL_DATABASE_URL": db, "VIGIL_SECRET_KEY_FILE": other}, "secrets", "rotate")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "is "+other+" the key file of this database?")
	now, err := os.ReadFile(other)
	require.NoError(t, err)
	require.Equal(t, string(was), string(now), "a wrong key file is left as it was")

	code, _, errOut = runVigil(t, env, "secrets", "spin")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "rotate or init")
	code, _, errOut = runVigil(t, map[string]string{"VIGIL_DATABASE_URL": "postgres://x@127.0.0.1:1/db"}, "secrets", "rotate")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "VIGIL_SECRET_KEY_FILE must be set with PostgreSQL")
}
