package server_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/migrations"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/server"
)

// freeAddr returns a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// startPing sends the headers of a POST of body to url on a connection of
// its own, with Expect: 100-continue, and returns once the handler has
// started reading the body (the server sent 100 Continue). finish sends
// the body and returns the answer's status.
func startPing(t *testing.T, addr, rawURL, body string) (finish func() (int, error)) {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
		u.RequestURI(), addr, len(body))
	require.NoError(t, err)
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 100 Continue\r\n", line)
	_, err = r.ReadString('\n') // the blank line after it
	require.NoError(t, err)
	return func() (int, error) {
		if _, err := io.WriteString(c, body); err != nil {
			return 0, err
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
}

// getWithHeader is get that also returns one header of the answer.
func getWithHeader(t *testing.T, url, header string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), resp.Header.Get(header)
}

// TestReadyzWhileMigrating holds the migration lock of a fresh schema, as
// another replica migrating it would, and checks what a starting replica
// answers meanwhile: alive, not ready because migrations run, and 503 with
// Retry-After for a ping; then ready once the lock is released.
func TestReadyzWhileMigrating(t *testing.T) {
	t.Parallel()
	dbURL := testdb.PostgresURL(t)
	db, err := sql.Open("pgx", dbURL)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	id, err := migrations.LockID(ctx, db)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", id)
	require.NoError(t, err)

	cfg := testConfig(dbURL)
	cfg.Listen = freeAddr(t)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := make(chan *server.Server, 1)
	startErr := make(chan error, 1)
	go func() {
		srv, err := server.Start(runCtx, cfg, testdb.Logger(t))
		startErr <- err
		started <- srv
	}()

	base := "http://" + cfg.Listen
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond, "Start answers /healthz while it waits to migrate")
	code, body := get(t, base+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "not ready: applying database migrations", body)
	code, _, retry := getWithHeader(t, base+"/ping/00000000-0000-4000-8000-000000000000", "Retry-After")
	require.Equal(t, http.StatusServiceUnavailable, code, "no ping is taken before the store is open")
	require.Equal(t, "1", retry)

	var unlocked bool
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", id).Scan(&unlocked))
	require.True(t, unlocked)
	require.NoError(t, <-startErr)
	srv := <-started
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	require.Eventually(t, func() bool {
		code, _ := get(t, base+"/readyz")
		return code == http.StatusOK
	}, 5*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
}

// TestReadyzDatabaseUnreachable runs a server on a database of its own,
// refuses connections to it, and checks that /readyz says so (while
// /healthz stays OK), then that it is ready again when the database is.
func TestReadyzDatabaseUnreachable(t *testing.T) {
	t.Parallel()
	base := testdb.PostgresURL(t) // skips or fails without PostgreSQL
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer admin.Close(ctx)
	name := fmt.Sprintf("vigil_ready_%d", time.Now().UnixNano())
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()

	runCtx, cancel := context.WithCancel(ctx)
	cfg := testConfig(u.String())
	cfg.SecretKeyFile = testdb.KeyFile(base)
	srv, err := server.New(runCtx, cfg, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	addr := "http://" + srv.Addr()
	require.Eventually(t, func() bool { code, _ := get(t, addr+"/readyz"); return code == http.StatusOK }, 5*time.Second, 10*time.Millisecond)

	_, err = admin.Exec(ctx, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS false")
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		code, body := get(t, addr+"/readyz")
		return code == http.StatusServiceUnavailable && strings.HasPrefix(body, "not ready: the database does not answer: ")
	}, 10*time.Second, 50*time.Millisecond)
	code, _ := get(t, addr+"/healthz")
	require.Equal(t, http.StatusOK, code, "the process is alive: no restart for a database that is down")

	_, err = admin.Exec(ctx, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS true")
	require.NoError(t, err)
	require.Eventually(t, func() bool { code, _ := get(t, addr+"/readyz"); return code == http.StatusOK }, 10*time.Second, 50*time.Millisecond)
}

// TestShutdownAnswersPingsInFlight starts a ping whose body is still being
// sent, shuts down, and checks that meanwhile /readyz says the replica is
// shutting down, new connections are refused, and the ping in flight is
// stored and answered 200 before Run returns.
func TestShutdownAnswersPingsInFlight(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dbPath := testdb.SQLitePath(t)
	srv, err := server.New(ctx, testConfig(dbPath), testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	base := "http://" + srv.Addr()
	require.Eventually(t, func() bool { code, _ := get(t, base+"/readyz"); return code == http.StatusOK }, 5*time.Second, 10*time.Millisecond)
	pingURL := base + "/ping/" + srv.Bootstrapped.Project.PingKey + "/job"
	code, _ := get(t, pingURL+"/log?create=1")
	require.Equal(t, http.StatusCreated, code)

	finish := startPing(t, srv.Addr(), pingURL, "first half, second half")

	cancel() // SIGTERM
	require.Eventually(t, func() bool {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code == http.StatusServiceUnavailable && rec.Body.String() == "not ready: shutting down"
	}, 5*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", srv.Addr())
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 5*time.Second, 5*time.Millisecond, "no new connection is accepted")
	select {
	case err := <-done:
		t.Fatalf("Run returned with a ping in flight: %v", err)
	default:
	}

	code, err = finish()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, <-done)

	// The ping is stored: a fresh open of the file finds it.
	store, err := server.OpenStore(context.Background(), dbPath, testdb.Logger(t))
	require.NoError(t, err)
	defer store.Close()
	m, err := store.MonitorGetBySlug(context.Background(), srv.Bootstrapped.Project.ID, "job")
	require.NoError(t, err)
	pings, err := store.PingList(context.Background(), &monitors.HistoryListParams{ProjectID: m.ProjectID, MonitorID: m.ID})
	require.NoError(t, err)
	require.Len(t, pings, 2)
	require.Equal(t, "first half, second half", pings[0].Body, "newest first")
}

// TestShutdownTimeout checks that a request that never ends holds a
// shutdown no longer than the shutdown timeout.
func TestShutdownTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(testdb.SQLitePath(t))
	cfg.ShutdownTimeout = time.Second
	srv, err := server.New(ctx, cfg, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	pingURL := "http://" + srv.Addr() + "/ping/" + srv.Bootstrapped.Project.PingKey + "/job"
	startPing(t, srv.Addr(), pingURL+"?create=1", "never finished") // and never sent
	start := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return within the shutdown timeout")
	}
	require.Less(t, time.Since(start), 3*time.Second)
}

// TestRefusesAsyncCommit checks that a PostgreSQL session whose commits
// return before they are flushed is refused at start, naming the setting
// and the way out, and that VIGIL_ALLOW_ASYNC_COMMIT lets it start.
func TestRefusesAsyncCommit(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(testdb.PostgresURL(t))
	require.NoError(t, err)
	q := u.Query()
	q.Set("synchronous_commit", "off") // pgx sends it as a run-time parameter
	u.RawQuery = q.Encode()
	cfg := testConfig(u.String())
	_, err = server.New(context.Background(), cfg, testdb.Logger(t))
	require.ErrorContains(t, err, "synchronous_commit is off")
	require.ErrorContains(t, err, "--allow-async-commit")

	cfg.Database.AllowAsyncCommit = true
	srv, err := server.New(context.Background(), cfg, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Store().Close())
}

// TestPoolSize checks the PostgreSQL pool a server opens: sized from its
// parts by default, the setting when one is given, and the URL's
// pool_max_conns when it names one.
func TestPoolSize(t *testing.T) {
	t.Parallel()
	dbURL := testdb.PostgresURL(t)
	maxConns := func(cfg server.Config) int32 {
		srv, err := server.New(context.Background(), cfg, testdb.Logger(t))
		require.NoError(t, err)
		defer srv.Store().Close()
		return srv.Store().(*pgstore.Store).Pool().Config().MaxConns
	}
	cfg := testConfig(dbURL)
	require.Equal(t, 29, cfg.PoolSize(), "1 ingest writer, 2 evaluator claims, 20 delivery workers, 2 River, 4 requests")
	require.EqualValues(t, 29, maxConns(cfg))
	cfg.Delivery.Workers = 4
	require.EqualValues(t, 13, maxConns(cfg))
	cfg.Database.MaxConns = 7
	require.EqualValues(t, 7, maxConns(cfg))
	cfg = testConfig(dbURL + "&pool_max_conns=9")
	require.EqualValues(t, 9, maxConns(cfg))
}
