package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/secrets"
	"github.com/vigilhq/vigil/server"
)

const hookSecret = "whsec-server-test-secret"

// rawConfigs returns every channel config as the database holds it, read
// with SQL of its own.
func rawConfigs(t *testing.T, dbURL string) string {
	t.Helper()
	if server.IsPostgresURL(dbURL) {
		conn, err := pgx.Connect(context.Background(), dbURL)
		require.NoError(t, err)
		defer conn.Close(context.Background())
		rows, err := conn.Query(context.Background(), `SELECT config::text FROM channels`)
		require.NoError(t, err)
		all, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return strings.Join(all, "\n")
	}
	db, err := sql.Open("sqlite", dbURL)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT config FROM channels`)
	require.NoError(t, err)
	defer rows.Close()
	var all []string
	for rows.Next() {
		var c string
		require.NoError(t, rows.Scan(&c))
		all = append(all, c)
	}
	require.NoError(t, rows.Err())
	return strings.Join(all, "\n")
}

// TestSecretKeyFileOnSQLite starts a server on a fresh SQLite file without
// VIGIL_SECRET_KEY_FILE: it creates the key file beside the database, 0600,
// and a channel secret given to the API is encrypted in the database and
// still sent.
func TestSecretKeyFileOnSQLite(t *testing.T) {
	t.Parallel()
	dbPath := testdb.SQLitePath(t)
	cfg := testConfig(dbPath)
	cfg.Delivery.AllowPrivate = true
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	st, err := os.Stat(dbPath + ".key")
	require.NoError(t, err, "the key file is made beside the database")
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.Contains(t, logs.String(), "created the secret key file")
	require.Contains(t, logs.String(), dbPath+".key")

	got := make(chan string, 1)
	hook := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Get("Authorization"):
		default:
		}
	})}
	hl := listenLocal(t)
	go hook.Serve(hl)
	defer hook.Close()

	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	base, key := "http://"+srv.Addr(), srv.Bootstrapped.APIKey

	body, _ := json.Marshal(map[string]any{"kind": "webhook", "name": "hook", "config": map[string]any{
		"url": "http://" + hl.Addr().String() + "/hook", "secret": hookSecret,
		"headers": map[string]string{"Authorization": "Bearer " + hookSecret}}})
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/channels", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var ch struct{ ID string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ch))
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	raw := rawConfigs(t, dbPath)
	require.Contains(t, raw, `"$sealed"`)
	require.NotContains(t, raw, hookSecret)

	req, _ = http.NewRequest(http.MethodPost, base+"/api/v1/channels/"+ch.ID+"/test", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "Bearer "+hookSecret, <-got, "the decrypted header is sent")
}

// TestPlainSecretsEncryptedAtStart checks the upgrade: channels stored in
// plain text by a Vigil from before encryption are encrypted when the
// server starts, and a wrong key file then stops the start with a clear
// error.
func TestPlainSecretsEncryptedAtStart(t *testing.T) {
	t.Parallel()
	dbPath := testdb.SQLitePath(t)
	old, err := server.OpenStore(t.Context(), dbPath, testdb.Logger(t)) // no key: as before encryption
	require.NoError(t, err)
	prj, err := old.ProjectCreate(t.Context(), &monitors.ProjectCreateParams{ID: "prj_1", Name: "p", PingKey: "pk_1234567890abcdef"})
	require.NoError(t, err)
	_, err = old.ChannelCreate(t.Context(), &monitors.ChannelCreateParams{ID: "ch_1", ProjectID: prj.ID, Kind: "webhook", Name: "hook",
		Config: json.RawMessage(`{"url":"https://hooks.example.com/x","secret":"` + hookSecret + `"}`)})
	require.NoError(t, err)
	require.NoError(t, old.Close())
	require.Contains(t, rawConfigs(t, dbPath), hookSecret)

	var logs bytes.Buffer
	srv, err := server.New(t.Context(), testConfig(dbPath), slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	require.Contains(t, logs.String(), "encrypted channel configs")
	require.NotContains(t, rawConfigs(t, dbPath), hookSecret)
	ch, err := srv.Store().ChannelGet(t.Context(), prj.ID, "ch_1")
	require.NoError(t, err)
	require.Contains(t, string(ch.Config), hookSecret)
	require.NoError(t, srv.Store().Close())

	other := filepath.Join(t.TempDir(), "other.key")
	_, err = secrets.Create(other)
	require.NoError(t, err)
	cfg := testConfig(dbPath)
	cfg.SecretKeyFile = other
	_, err = server.New(t.Context(), cfg, testdb.Logger(t))
	require.ErrorIs(t, err, secrets.ErrUnknownKey)
	require.ErrorContains(t, err, "is "+other+" the key file of this database?")
}

// TestSecretKeyFileOnPostgres checks that PostgreSQL needs a key file that
// exists: replicas that each made their own could not read each other's
// secrets.
func TestSecretKeyFileOnPostgres(t *testing.T) {
	t.Parallel()
	url := "postgres://nobody@127.0.0.1:1/none"
	_, err := server.New(t.Context(), testConfig(url), testdb.Logger(t))
	require.ErrorContains(t, err, "VIGIL_SECRET_KEY_FILE must be set with PostgreSQL")
	cfg := testConfig(url)
	cfg.SecretKeyFile = filepath.Join(t.TempDir(), "missing.key")
	_, err = server.New(t.Context(), cfg, testdb.Logger(t))
	require.ErrorContains(t, err, "does not exist")
	require.ErrorContains(t, err, "vigil secrets init")
	require.NoFileExists(t, cfg.SecretKeyFile, "never made on PostgreSQL")
}

func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return l
}
