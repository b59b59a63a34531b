package server_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// TestServeOpensMissedAndStuckIncidents runs a whole server with the real
// clock and short schedules, pings it over HTTP, and waits for the
// evaluator to open a missed and a stuck incident.
func TestServeOpensMissedAndStuckIncidents(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg := testConfig(testdb.SQLitePath(t))
	cfg.Evaluator.OutageThreshold = 10 * time.Second
	srv, err := server.New(ctx, cfg, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	store := srv.Store()
	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	prj := projects[0]
	newMonitor := func(slug string, sched monitors.ScheduleSpec, maxRuntime int64) *monitors.Monitor {
		now := time.Now()
		m := &monitors.Monitor{ID: keys.NewID(), ProjectID: prj.ID, Name: slug, PingKey: keys.NewPingKey(),
			Schedule: sched, GraceSeconds: 1, MaxRuntimeSeconds: maxRuntime, CreatedAt: now, UpdatedAt: now}
		m.ApplyDefaults()
		require.NoError(t, m.Validate())
		require.NoError(t, store.MonitorInsert(ctx, m))
		return m
	}
	// Due every two seconds; it pings once and never again.
	every2s := newMonitor("every-2s", monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "*/2 * * * * *"}, 0)
	// Starts a run that may take a second and never finishes.
	slow := newMonitor("slow", monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 60}, 1)

	ping := func(path string) {
		t.Helper()
		resp, err := http.Get("http://" + srv.Addr() + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	}
	start := time.Now()
	ping("/ping/" + every2s.PingKey)
	ping("/ping/" + slow.PingKey + "/start")

	// The missed deadline comes at most 2s + 1s of grace after the ping,
	// the stuck one 1s after the start.
	find := func(m *monitors.Monitor) *monitors.Incident {
		ins, err := store.IncidentList(ctx, &monitors.IncidentListParams{ProjectID: prj.ID, MonitorID: m.ID})
		require.NoError(t, err)
		if len(ins) == 0 {
			return nil
		}
		require.Len(t, ins, 1)
		return ins[0]
	}
	var missed, stuck *monitors.Incident
	require.Eventually(t, func() bool {
		missed, stuck = find(every2s), find(slow)
		return missed != nil && stuck != nil
	}, 10*time.Second, 50*time.Millisecond)
	t.Logf("incidents opened %s (missed) and %s (stuck) after the pings", missed.OpenedAt.Sub(start), stuck.OpenedAt.Sub(start))

	require.Equal(t, monitors.IncidentMissed, missed.Kind)
	require.Contains(t, missed.Summary, "every-2s did not run at")
	require.Less(t, missed.OpenedAt.Sub(start), 5*time.Second)
	require.Equal(t, monitors.IncidentStuck, stuck.Kind)
	require.Equal(t, int64(1), stuck.RunSeq)
	require.Contains(t, stuck.Summary, "max runtime 1s")
	require.Less(t, stuck.OpenedAt.Sub(start), 4*time.Second)

	// Each has its event for delivery, once.
	for _, in := range []*monitors.Incident{missed, stuck} {
		evs, err := store.IncidentEventList(ctx, &monitors.IncidentEventListParams{ProjectID: prj.ID, IncidentID: in.ID})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, monitors.EventOpened, evs[0].Kind)
	}

	// The evaluator's metrics are served with the others.
	resp, err := http.Get("http://" + srv.Addr() + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `vigil_evaluator_incidents_opened_total{kind="missed"} 1`)
	require.Contains(t, string(body), `vigil_evaluator_incidents_opened_total{kind="stuck"} 1`)
}
