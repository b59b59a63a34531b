package server_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/server"
)

func testConfig(dbURL string) server.Config {
	return server.Config{
		DatabaseURL: dbURL, Listen: "127.0.0.1:0", LogLevel: "info", LogFormat: "text",
		KeepPings: 100, KeepRuns: 100, PruneInterval: time.Minute, SecretKeyFile: testdb.KeyFile(dbURL),
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestServeHealthAndBootstrap(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbURL := url(t)
			ctx, cancel := context.WithCancel(context.Background())
			srv, err := server.New(ctx, testConfig(dbURL), testdb.Logger(t))
			require.NoError(t, err)
			require.NotNil(t, srv.Bootstrapped, "an empty database gets a default project")
			require.Regexp(t, `^vk_[A-Za-z0-9_-]{40,}$`, srv.Bootstrapped.APIKey)
			require.NoError(t, srv.Listen())
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx) }()

			base := "http://" + srv.Addr()
			code, body := get(t, base+"/healthz")
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, "OK", body)
			code, _ = get(t, base+"/readyz")
			require.Equal(t, http.StatusOK, code)

			cancel()
			require.NoError(t, <-done)

			// A second start on the same database creates nothing more.
			srv2, err := server.New(context.Background(), testConfig(dbURL), testdb.Logger(t))
			require.NoError(t, err)
			require.Nil(t, srv2.Bootstrapped)
			projects, err := srv2.Store().ProjectList(context.Background())
			require.NoError(t, err)
			require.Len(t, projects, 1)
			require.NoError(t, srv2.Store().Close())
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	c := server.Config{DatabaseURL: "", Listen: "nope", BaseURL: "ftp://x", LogLevel: "loud", LogFormat: "xml"}
	err := c.Validate()
	require.Error(t, err)
	for _, want := range []string{"database", "listen", "base URL", "log level", "log format"} {
		require.ErrorContains(t, err, want)
	}
}

// TestBaseURLWithPortZero checks that ping URLs name the bound port when the
// server listens on port 0 without a configured base URL.
func TestBaseURLWithPortZero(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := server.New(ctx, testConfig(testdb.SQLitePath(t)), testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen(), "Listen after New is harmless")
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	req, err := http.NewRequest(http.MethodGet, "http://"+srv.Addr()+"/api/v1/project", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Bootstrapped.APIKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Contains(t, string(body), "http://"+srv.Addr()+"/badge/")
	require.NotContains(t, string(body), ":0/")
}

// TestUnknownPaths checks that an unknown API path is a JSON 404, not the
// dashboard's sign-in redirect, and that pages still ask to sign in.
func TestUnknownPaths(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := server.New(ctx, testConfig(testdb.SQLitePath(t)), testdb.Logger(t))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	req, err := http.NewRequest(http.MethodGet, "http://"+srv.Addr()+"/api/v1/nope", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Bootstrapped.APIKey)
	resp, err := client.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	require.JSONEq(t, `{"error":"not found"}`, string(body))

	resp, err = client.Get("http://" + srv.Addr() + "/monitors/new")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "pages still ask to sign in")
}
