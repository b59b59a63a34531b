package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// eachDatabase runs fn with a fresh database URL of each kind.
func eachDatabase(t *testing.T, fn func(t *testing.T, dbURL string)) {
	for name, dbURL := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, dbURL(t))
		})
	}
}

// runServer runs a server with cfg until the test ends, and returns it
// and its base URL.
func runServer(t *testing.T, cfg server.Config) (*server.Server, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return srv, "http://" + srv.Addr()
}

func pingStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestMonitorLimit: VIGIL_MAX_MONITORS_PER_PROJECT holds for ?create=1
// pings, the API and declarations, each refused with the limit named and
// nothing created.
func TestMonitorLimit(t *testing.T) {
	t.Parallel()
	eachDatabase(t, func(t *testing.T, dbURL string) {
		cfg := testConfig(dbURL)
		cfg.MaxMonitorsPerProject = 2
		srv, base := runServer(t, cfg)
		key, prj := srv.Bootstrapped.APIKey, srv.Bootstrapped.Project

		require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/monitors", key, map[string]any{"name": "one"}, nil))
		status, body := pingStatus(t, base+"/ping/"+prj.PingKey+"/two?create=1")
		require.Equal(t, http.StatusCreated, status, body)

		status, body = pingStatus(t, base+"/ping/"+prj.PingKey+"/three?create=1")
		require.Equal(t, http.StatusForbidden, status)
		require.Equal(t, "the monitor was not created: the project has reached its limit of 2 monitors (VIGIL_MAX_MONITORS_PER_PROJECT)", body)
		status, _ = pingStatus(t, base+"/ping/"+prj.PingKey+"/two")
		require.Equal(t, http.StatusOK, status, "existing monitors still take pings")

		var e struct{ Error string }
		require.Equal(t, http.StatusConflict, apiCall(t, http.MethodPost, base+"/api/v1/monitors", key, map[string]any{"name": "four"}, &e))
		require.Contains(t, e.Error, "limit of 2 monitors (VIGIL_MAX_MONITORS_PER_PROJECT)")
		require.Equal(t, http.StatusConflict, apiCall(t, http.MethodPut, base+"/api/v1/sources/app/monitors", key,
			map[string]any{"monitors": []map[string]any{{"slug": "five"}}}, &e))
		require.Contains(t, e.Error, "limit of 2 monitors")

		ms, err := srv.Store().MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: prj.ID, Now: time.Now()})
		require.NoError(t, err)
		require.Len(t, ms, 2, "nothing half-created")
	})
}

// TestRotatePingKeys: a rotated key stops answering at once, through real
// HTTP, and the new one works.
func TestRotatePingKeys(t *testing.T) {
	t.Parallel()
	eachDatabase(t, func(t *testing.T, dbURL string) {
		srv, base := runServer(t, testConfig(dbURL))
		key, prj := srv.Bootstrapped.APIKey, srv.Bootstrapped.Project
		var m struct {
			ID      string `json:"id"`
			PingKey string `json:"ping_key"`
			PingURL string `json:"ping_url"`
		}
		require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/monitors", key, map[string]any{"name": "job"}, &m))
		old := m.PingKey
		status, _ := pingStatus(t, base+"/ping/"+old)
		require.Equal(t, http.StatusOK, status)

		require.Equal(t, http.StatusOK, apiCall(t, http.MethodPost, base+"/api/v1/monitors/"+m.ID+"/rotate-ping-key", key, nil, &m))
		require.NotEqual(t, old, m.PingKey)
		require.True(t, keys.IsPingKey(m.PingKey))
		require.True(t, strings.HasSuffix(m.PingURL, "/ping/"+m.PingKey), m.PingURL)
		status, _ = pingStatus(t, base+"/ping/"+old)
		require.Equal(t, http.StatusNotFound, status, "the old key stops at once")
		status, _ = pingStatus(t, base+"/ping/"+m.PingKey)
		require.Equal(t, http.StatusOK, status)

		var p struct {
			PingKey string `json:"ping_key"`
		}
		require.Equal(t, http.StatusOK, apiCall(t, http.MethodPost, base+"/api/v1/project/rotate-ping-key", key, nil, &p))
		require.NotEqual(t, prj.PingKey, p.PingKey)
		status, _ = pingStatus(t, base+"/ping/"+prj.PingKey+"/job")
		require.Equal(t, http.StatusNotFound, status)
		status, _ = pingStatus(t, base+"/ping/"+p.PingKey+"/job")
		require.Equal(t, http.StatusOK, status)

		// A read-only key may not rotate.
		ro, _, hash := keys.NewAPIKey()
		_, err := srv.Store().APIKeyCreate(context.Background(), &monitors.APIKeyCreateParams{ID: keys.NewID(), ProjectID: prj.ID,
			Name: "ro", Prefix: ro[:8], Hash: hash, ReadOnly: true, Now: time.Now()})
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, apiCall(t, http.MethodPost, base+"/api/v1/monitors/"+m.ID+"/rotate-ping-key", ro, nil, nil))
		require.Equal(t, http.StatusForbidden, apiCall(t, http.MethodPost, base+"/api/v1/project/rotate-ping-key", ro, nil, nil))
	})
}

// TestAPIKeyLastUsed: a request records its key's use, once a minute at
// most, without waiting for the write.
func TestAPIKeyLastUsed(t *testing.T) {
	t.Parallel()
	eachDatabase(t, func(t *testing.T, dbURL string) {
		srv, base := runServer(t, testConfig(dbURL))
		key := srv.Bootstrapped.APIKey
		lastUsed := func() *time.Time {
			k, err := srv.Store().APIKeyGetByHash(context.Background(), keys.HashAPIKey(key))
			require.NoError(t, err)
			return k.LastUsedAt
		}
		require.Nil(t, lastUsed())
		require.Equal(t, http.StatusOK, apiCall(t, http.MethodGet, base+"/api/v1/monitors", key, nil, nil))
		require.Eventually(t, func() bool { return lastUsed() != nil }, 5*time.Second, 10*time.Millisecond)
		first := *lastUsed()
		require.Equal(t, http.StatusOK, apiCall(t, http.MethodGet, base+"/api/v1/monitors", key, nil, nil))
		require.Equal(t, http.StatusOK, apiCall(t, http.MethodGet, base+"/api/v1/project", key, nil, nil))
		require.Equal(t, first, *lastUsed(), "within the minute, no other write")
	})
}

// TestPruneKeepsHistoryWindow: incidents resolved longer ago than
// VIGIL_KEEP_HISTORY go with their events; an open one stays however old.
func TestPruneKeepsHistoryWindow(t *testing.T) {
	t.Parallel()
	eachDatabase(t, func(t *testing.T, dbURL string) {
		var now atomic.Pointer[time.Time]
		t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
		now.Store(&t0)
		cfg := testConfig(dbURL)
		cfg.NowFunc = func() time.Time { return *now.Load() }
		cfg.KeepHistory = 30 * 24 * time.Hour
		srv, base := runServer(t, cfg)
		key := srv.Bootstrapped.APIKey
		var done, open struct {
			ID      string `json:"id"`
			PingKey string `json:"ping_key"`
		}
		require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/monitors", key, map[string]any{"name": "done"}, &done))
		require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/monitors", key, map[string]any{"name": "open"}, &open))
		for _, p := range []string{done.PingKey + "/fail", done.PingKey, open.PingKey + "/fail"} {
			status, body := pingStatus(t, base+"/ping/"+p)
			require.Equal(t, http.StatusOK, status, body)
		}
		ctx := context.Background()
		list := func() []*monitors.Incident {
			ins, err := srv.Store().IncidentList(ctx, &monitors.IncidentListParams{ProjectID: srv.Bootstrapped.Project.ID})
			require.NoError(t, err)
			return ins
		}
		require.Len(t, list(), 2)
		srv.PruneOnce(ctx)
		require.Len(t, list(), 2, "within the window")

		later := t0.Add(31 * 24 * time.Hour)
		now.Store(&later)
		srv.PruneOnce(ctx)
		ins := list()
		require.Len(t, ins, 1)
		require.Equal(t, open.ID, ins[0].MonitorID, "an open incident is never pruned")
	})
}
