package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// TestServeIngest pings a running server by slug, with create=1 and with
// the body and rate limit settings, and finds the ingest metrics in the
// server's registry.
func TestServeIngest(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(url(t))
			cfg.Ingest = ingest.Config{BodyLimit: 2048, RateLimit: 1, RateBurst: 2}
			ctx, cancel := context.WithCancel(context.Background())
			srv, err := server.New(ctx, cfg, testdb.Logger(t))
			require.NoError(t, err)
			require.NoError(t, srv.Listen())
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx) }()

			base := "http://" + srv.Addr() + "/ping/" + srv.Bootstrapped.Project.PingKey + "/backup"
			code, body := get(t, base+"/start?create=1")
			require.Equal(t, http.StatusCreated, code)
			require.Equal(t, "Created", body)
			resp, err := http.Get(base)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "2048", resp.Header.Get("Ping-Body-Limit"))
			code, _ = get(t, base)
			require.Equal(t, http.StatusTooManyRequests, code, "a burst of 2")

			m, err := srv.Store().MonitorGetBySlug(context.Background(), srv.Bootstrapped.Project.ID, "backup")
			require.NoError(t, err)
			ps, err := srv.Store().PingList(context.Background(), &monitors.HistoryListParams{ProjectID: m.ProjectID, MonitorID: m.ID})
			require.NoError(t, err)
			require.Len(t, ps, 2)

			mfs, err := srv.Registry.Gather()
			require.NoError(t, err)
			names := map[string]bool{}
			for _, mf := range mfs {
				names[mf.GetName()] = true
			}
			for _, n := range []string{"vigil_ingest_pings_total", "vigil_ingest_batch_size", "vigil_ingest_ping_duration_seconds"} {
				require.True(t, names[n], "metric %s registered", n)
			}

			cancel()
			require.NoError(t, <-done)
		})
	}
}
