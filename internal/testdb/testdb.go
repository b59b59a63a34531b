// Package testdb gives tests real databases: a fresh PostgreSQL schema per
// test in the database named by VIGIL_TEST_POSTGRES_URL, and a SQLite file
// per test in a temporary directory.
//
// Without VIGIL_TEST_POSTGRES_URL, PostgreSQL tests are skipped, unless
// CI=true, where they fail: CI must never pass by skipping the production
// database.
//
// Tests of other packages run against both stores with:
//
//	for name, open := range testdb.Stores() {
//		t.Run(name, func(t *testing.T) {
//			s := open(t)
//			...
//		})
//	}
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
	"github.com/vigilhq/vigil/secrets"
)

// PostgresURLEnv names the environment variable with the URL of the test
// database, such as postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const PostgresURLEnv = "VIGIL_TEST_POSTGRES_URL"

// PostgresURL creates a fresh, empty schema in the database named by
// VIGIL_TEST_POSTGRES_URL and returns a URL whose search_path is that
// schema. The schema is dropped when the test ends. Without the variable it
// skips the test, or fails it when CI=true.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(PostgresURLEnv)
	if base == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal(PostgresURLEnv + " must be set when CI=true")
		}
		tb.Skip(PostgresURLEnv + " is not set; skipping a PostgreSQL test")
	}
	ctx := context.Background()
	schema := "vigil_test_" + randomHex(8)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("connect to %s: %v", PostgresURLEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create test schema: %v", err)
	}
	tb.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("drop test schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	u, err := withSearchPath(base, schema)
	if err != nil {
		tb.Fatalf("%s: %v", PostgresURLEnv, err)
	}
	key := filepath.Join(tb.TempDir(), "secret.key")
	if _, err := secrets.Create(key); err != nil {
		tb.Fatalf("create the secret key file of the test database: %v", err)
	}
	keyFiles.Store(schema, key)
	tb.Cleanup(func() { keyFiles.Delete(schema) })
	return u
}

// withSearchPath sets search_path in a postgres:// URL or a key=value
// connection string; pgx sends it to the server as a run-time parameter.
func withSearchPath(base, schema string) (string, error) {
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		u, err := url.Parse(base)
		if err != nil {
			return "", fmt.Errorf("parse url: %w", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return base + " search_path=" + schema, nil
}

// keyFiles maps the schemas PostgresURL made to their secret key files.
var keyFiles sync.Map

// KeyFile returns the secret key file (VIGIL_SECRET_KEY_FILE) of a test
// database that PostgresURL made, created with it, for servers on it to
// share; "" for any other database (beside a SQLite file, the server makes
// its own).
func KeyFile(dbURL string) string {
	schema := ""
	if u, err := url.Parse(dbURL); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		schema = u.Query().Get("search_path")
	} else if _, after, ok := strings.Cut(dbURL, "search_path="); ok {
		schema, _, _ = strings.Cut(after, " ")
	}
	if v, ok := keyFiles.Load(schema); ok && schema != "" {
		return v.(string)
	}
	return ""
}

// SQLitePath returns the path of a SQLite file, not yet created, in a
// directory removed when the test ends.
func SQLitePath(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(tb.TempDir(), "vigil.db")
}

// Logger returns a logger that writes to the test's log.
func Logger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Postgres opens a pgstore.Store on a fresh schema (see PostgresURL), closed
// when the test ends.
func Postgres(tb testing.TB) *pgstore.Store {
	tb.Helper()
	url := PostgresURL(tb)
	s, err := pgstore.Open(context.Background(), url, pgstore.Options{Logger: Logger(tb)})
	if err != nil {
		tb.Fatalf("open pgstore: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// SQLite opens a sqlitestore.Store on a fresh file, closed when the test
// ends.
func SQLite(tb testing.TB) *sqlitestore.Store {
	tb.Helper()
	s, err := sqlitestore.Open(context.Background(), SQLitePath(tb), sqlitestore.Options{Logger: Logger(tb)})
	if err != nil {
		tb.Fatalf("open sqlitestore: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// Stores returns a constructor of an empty store for each implementation,
// by name: "sqlite" and "postgres". The postgres one skips (or, in CI,
// fails) the test when VIGIL_TEST_POSTGRES_URL is not set.
func Stores() map[string]func(t *testing.T) monitors.Store {
	return map[string]func(t *testing.T) monitors.Store{
		"sqlite":   func(t *testing.T) monitors.Store { return SQLite(t) },
		"postgres": func(t *testing.T) monitors.Store { return Postgres(t) },
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
