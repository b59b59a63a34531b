package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// TestProjectMetrics: /metrics/project/{read-only key} serves a gauge set
// per monitor of that project only, as the clock sees them.
func TestProjectMetrics(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		hourly := func(name string, tags ...string) api.Monitor {
			tags = append([]string{}, tags...)
			return b.createMonitor(map[string]any{"name": name, "tags": tags, "grace_seconds": 300,
				"schedule": map[string]any{"kind": "interval", "every_seconds": 3600}})
		}
		up := hourly("up-job", "etl", "nightly")
		late := hourly("late-job")
		running := hourly("running-job")
		down := hourly("down-job")
		paused := hourly("paused-job")
		hourly("never-job")
		b.ping(up.PingKey, monitors.PingSuccess, t0.Add(-10*time.Minute))
		b.ping(late.PingKey, monitors.PingSuccess, t0.Add(-62*time.Minute))
		b.ping(running.PingKey, monitors.PingStart, t0.Add(-time.Minute))
		b.ping(down.PingKey, monitors.PingFail, t0.Add(-3*time.Minute))
		r := b.do(http.MethodPost, "/api/v1/monitors/"+paused.ID+"/pause", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		b.do(http.MethodPost, "/api/v1/monitors", b.otherRW, map[string]any{"name": "someone-elses"})

		r = b.do(http.MethodGet, "/metrics/project/"+b.ro, "", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		body := string(r.body)
		lbl := func(m string, tags string) string {
			return `{id="` + monitorIDByName(t, b, m) + `",name="` + m + `",slug="` + m + `",tags="` + tags + `"}`
		}
		for _, want := range []string{
			"vigil_project_monitors 6",
			"vigil_monitor_up" + lbl("up-job", "etl nightly") + " 1",
			"vigil_monitor_last_ping_age_seconds" + lbl("up-job", "etl nightly") + " 600",
			"vigil_monitor_grace" + lbl("up-job", "etl nightly") + " 0",
			"vigil_monitor_grace" + lbl("late-job", "") + " 1",
			"vigil_monitor_up" + lbl("late-job", "") + " 1",
			"vigil_monitor_started" + lbl("running-job", "") + " 1",
			"vigil_monitor_started" + lbl("up-job", "etl nightly") + " 0",
			"vigil_monitor_up" + lbl("down-job", "") + " 0",
			"vigil_monitor_paused" + lbl("paused-job", "") + " 1",
			"vigil_monitor_paused" + lbl("up-job", "etl nightly") + " 0",
			"vigil_monitor_up" + lbl("never-job", "") + " 1",
		} {
			require.Contains(t, body, want+"\n")
		}
		require.NotContains(t, body, "vigil_monitor_last_ping_age_seconds"+lbl("never-job", ""), "never pinged: no age")
		require.NotContains(t, body, "someone-elses")
		require.NotContains(t, body, "vigil_api_requests_total", "the global metrics stay at /metrics")

		r = b.do(http.MethodGet, "/metrics/project/"+b.rw, "", nil)
		require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
		require.Contains(t, r.errorBody(t).Error, "read-only")
		for _, bad := range []string{"nope", strings.Repeat("x", 64)} {
			r = b.do(http.MethodGet, "/metrics/project/"+bad, "", nil)
			require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
		}
		key, err := b.store.APIKeyGetByHash(context.Background(), keys.HashAPIKey(b.ro))
		require.NoError(t, err)
		require.NoError(t, b.store.APIKeyRevoke(context.Background(), b.prj.ID, key.ID, t0))
		r = b.do(http.MethodGet, "/metrics/project/"+b.ro, "", nil)
		require.Equal(t, http.StatusNotFound, r.status, "a revoked key: %s", r.body)
	})
}

func monitorIDByName(t *testing.T, b *bundle, name string) string {
	t.Helper()
	ms, err := b.store.MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: b.prj.ID})
	require.NoError(t, err)
	for _, m := range ms {
		if m.Name == name {
			return m.ID
		}
	}
	t.Fatalf("no monitor %s", name)
	return ""
}
