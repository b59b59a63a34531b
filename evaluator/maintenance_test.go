package evaluator_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/evaluator"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
)

func (b *testBundle) window(t *testing.T, w *monitors.MaintenanceWindow) *monitors.MaintenanceWindow {
	t.Helper()
	w.ID, w.ProjectID, w.CreatedAt, w.UpdatedAt = "mw-"+w.Name, b.prj.ID, t0, t0
	require.NoError(t, b.store.MaintenanceWindowCreate(b.ctx, w))
	return w
}

// TestMaintenanceWindowOverNightlyJob: a window from 02:30 to 04:00 over
// jobs that run at 03:00. Nothing opens inside it; after it, each job has
// a fresh grace window (5m) before it is missed.
func TestMaintenanceWindowOverNightlyJob(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		nightly := func(m *monitors.Monitor) {
			m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 3 * * *"}
			m.Tags = []string{"db"}
		}
		silent := b.monitor(t, "silent", nightly)
		late := b.monitor(t, "late", nightly)
		other := b.monitor(t, "other", func(m *monitors.Monitor) {
			m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 3 * * *"}
		})
		day1 := time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC)
		day2 := day1.Add(24 * time.Hour)
		for _, m := range []*monitors.Monitor{silent, late, other} {
			b.ping(t, m, monitors.PingSuccess, day1)
		}
		start, end := day2.Add(-30*time.Minute), day2.Add(time.Hour)
		b.window(t, &monitors.MaintenanceWindow{Name: "db-upgrade", Tags: []string{"db"}, StartsAt: start, EndsAt: end})

		require.Equal(t, 1, b.tick(t, day2.Add(-time.Hour), end.Add(-time.Second)), "only the monitor outside the window")
		ins := b.incidents(t, nil)
		require.Len(t, ins, 1)
		require.Equal(t, other.ID, ins[0].MonitorID)
		got, err := b.store.MonitorGet(b.ctx, b.prj.ID, silent.ID)
		require.NoError(t, err)
		require.Equal(t, end.Add(5*time.Minute), *got.NextDeadlineAt, "a fresh grace window from the end")

		// late runs in its fresh grace window: nothing to say. silent
		// does not: missed, at the end of its fresh grace.
		b.ping(t, late, monitors.PingSuccess, end.Add(2*time.Minute))
		require.Zero(t, b.tick(t, end, end.Add(5*time.Minute-time.Second)))
		require.Equal(t, 1, b.runOnce(t, end.Add(5*time.Minute)).Opened)
		require.Empty(t, b.incidents(t, late))
		sil := b.incidents(t, silent)
		require.Len(t, sil, 1)
		require.Equal(t, monitors.IncidentMissed, sil[0].Kind)
		require.Equal(t, end.Add(5*time.Minute), sil[0].OpenedAt)
		b.requireEvents(t)
	})
}

// TestRecurringMaintenanceAcrossAutumnChange: a window every Sunday at
// 02:00 Europe/Berlin lasting two hours, over an hourly job, the week
// clocks go back (2026-10-25, 02:00 is CEST, UTC+2) and the week after
// (02:00 CET, UTC+1).
func TestRecurringMaintenanceAcrossAutumnChange(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		// Passes here jump days apart: no outage of Vigil in this test.
		ev, err := evaluator.New(b.store, evaluator.Config{NowFunc: b.clock.Now, BatchSize: 10, Workers: 1,
			OutageThreshold: 30 * 24 * time.Hour, Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry()})
		require.NoError(t, err)
		b.ev = ev
		m := b.monitor(t, "hourly", func(m *monitors.Monitor) {
			m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *"}
		})
		spec, err := monitors.ParseMaintenanceSchedule("0 2 * * 0", "Europe/Berlin")
		require.NoError(t, err)
		b.window(t, &monitors.MaintenanceWindow{Name: "sunday", All: true, Schedule: spec, DurationSeconds: 2 * 3600})

		utc := func(s string) time.Time {
			v, err := time.Parse(time.RFC3339, s)
			require.NoError(t, err)
			return v
		}
		opened := func(at string) int { return b.runOnce(t, utc(at)).Opened }

		// Sunday 25 October: the window is 00:00Z to 02:00Z.
		b.ping(t, m, monitors.PingSuccess, utc("2026-10-24T23:00:00Z"))
		for _, at := range []string{"2026-10-25T00:05:00Z", "2026-10-25T01:05:00Z", "2026-10-25T02:04:59Z"} {
			require.Zero(t, opened(at), at)
		}
		require.Equal(t, 1, opened("2026-10-25T02:05:00Z"), "missed after the fresh grace")
		b.ping(t, m, monitors.PingSuccess, utc("2026-10-25T02:10:00Z"))

		// Saturday: no window.
		b.ping(t, m, monitors.PingSuccess, utc("2026-10-31T00:00:00Z"))
		require.Equal(t, 1, opened("2026-10-31T01:05:00Z"), "no window on Saturday")
		b.ping(t, m, monitors.PingSuccess, utc("2026-10-31T01:10:00Z"))

		// Sunday 1 November: the window is 01:00Z to 03:00Z.
		b.ping(t, m, monitors.PingSuccess, utc("2026-11-01T00:00:00Z"))
		require.Zero(t, opened("2026-11-01T00:30:00Z"))
		for _, at := range []string{"2026-11-01T01:05:00Z", "2026-11-01T02:05:00Z", "2026-11-01T03:04:59Z"} {
			require.Zero(t, opened(at), at)
		}
		require.Equal(t, 1, opened("2026-11-01T03:05:00Z"))
		ins := b.incidents(t, m)
		require.Len(t, ins, 3)
		b.requireEvents(t)
		_ = storetest.T0
	})
}
