package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// runUptime runs the conformance tests of the uptime history reads, with
// the numbers monitors.ComputeUptime makes of them.
func runUptime(t *testing.T, newStore func(t *testing.T) monitors.Store) {
	t.Run("Uptime/Week", func(t *testing.T) {
		t.Parallel()
		testUptimeWeek(t, setup(t, newStore))
	})
	t.Run("Uptime/OtherProject", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		m := MustMonitor(t, b.s, b.prj.ID, "other", nil)
		other := MustProject(t, b.s)
		_, err := b.s.UptimeHistory(b.ctx, &monitors.UptimeHistoryParams{ProjectID: other.ID, MonitorID: m.ID,
			From: T0, To: T0.Add(time.Hour)})
		require.ErrorIs(t, err, monitors.ErrNotFound)
	})
}

// testUptimeWeek plays a week of a nightly job at 03:30 Europe/Berlin,
// 2026-03-23 (Monday) to 2026-03-29 (Sunday, the day clocks go forward:
// 23 hours), through pings and the evaluator, and checks the numbers
// worked out by hand:
//
//	Mon  03:30:00-03:30:10 success (10s)                          on time
//	Tue  03:30:00-03:30:05 attempt 1 fails, retry at 03:40;
//	     03:40:00-03:40:30 attempt 2 succeeds (30s)                on time
//	Wed  no run: missed opens at 03:35:00, resolved by Thursday's
//	     start at 03:30:00 (23h55m: 20h25m on Wed, 3h30m on Thu)  missed
//	Thu  03:30:00-03:30:40 success (40s)                          on time
//	Fri  03:30:00-03:30:20 success (20s)                          on time
//	Sat  03:30:00-03:30:05 fails for good: failed opens at
//	     03:30:05 CET, resolved Sunday 03:31:00 CEST (23h00m55s:
//	     20h29m55s on Sat, 2h31m on Sun, which has no 02:00-03:00)  failed
//	Sun  03:30:00-03:31:00 success (60s)                          on time
//
// Now is Sunday 12:00 CEST. The week: 7 occurrences, 5 on time, run
// durations 10, 20, 30, 40, 60 s: p50 30s, p95 60s (nearest rank).
func testUptimeWeek(t *testing.T, b *bundle) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	at := func(day, h, mi, s int) time.Time { return time.Date(2026, 3, day, h, mi, s, 0, berlin) }
	m := MustMonitor(t, b.s, b.prj.ID, "nightly", func(m *monitors.Monitor) {
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 3 * * *", TZ: "Europe/Berlin"}
		m.CreatedAt, m.UpdatedAt = at(22, 12, 0, 0), at(22, 12, 0, 0)
	})
	ping := func(kind monitors.PingKind, ts time.Time, rid string, attempt int, retryAt *time.Time) {
		t.Helper()
		p := Ping(m, kind, ts)
		p.Ping.RID, p.Ping.Attempt, p.Ping.RetryAt = rid, attempt, retryAt
		MustRecord(t, b.s, p)
	}
	run := func(day int, rid string, secs int) {
		t.Helper()
		ping(monitors.PingStart, at(day, 3, 30, 0), rid, 0, nil)
		ping(monitors.PingSuccess, at(day, 3, 30, secs), rid, 0, nil)
	}
	run(23, "mon", 10)
	ping(monitors.PingStart, at(24, 3, 30, 0), "tue-1", 1, nil)
	ping(monitors.PingFail, at(24, 3, 30, 5), "tue-1", 1, ptr(at(24, 3, 40, 0)))
	require.Empty(t, b.evaluate(t, at(24, 3, 35, 0), 10, monitors.TimeOptions{}), "a retry was announced")
	ping(monitors.PingStart, at(24, 3, 40, 0), "tue-2", 2, nil)
	ping(monitors.PingSuccess, at(24, 3, 40, 30), "tue-2", 2, nil)
	require.Len(t, b.evaluate(t, at(25, 3, 35, 0), 10, monitors.TimeOptions{}), 1, "Wednesday is missed")
	run(26, "thu", 40)
	run(27, "fri", 20)
	ping(monitors.PingStart, at(28, 3, 30, 0), "sat", 0, nil)
	ping(monitors.PingFail, at(28, 3, 30, 5), "sat", 0, nil)
	run(29, "sun", 60)
	now := at(29, 12, 0, 0)

	sch, err := monitors.UptimeSchedule(m)
	require.NoError(t, err)
	from, to := monitors.UptimeSpan(berlin, now, 7)
	require.Equal(t, time.Date(2025, 12, 30, 0, 0, 0, 0, berlin), from, "89 days before today: 90 days")
	h, err := b.s.UptimeHistory(b.ctx, &monitors.UptimeHistoryParams{ProjectID: b.prj.ID, MonitorID: m.ID, From: from, To: to})
	require.NoError(t, err)
	require.Len(t, h.Runs, 7)
	require.Len(t, h.Incidents, 2)
	u, err := monitors.ComputeUptime(sch, h, now, 7)
	require.NoError(t, err)

	type day struct {
		date           string
		hours          float64
		occ, onTime    int
		missed, failed monitors.IncidentTally
		runs           int
		p50            time.Duration
	}
	s := time.Second
	want := []day{
		{"2026-03-23", 24, 1, 1, monitors.IncidentTally{}, monitors.IncidentTally{}, 1, 10 * s},
		{"2026-03-24", 24, 1, 1, monitors.IncidentTally{}, monitors.IncidentTally{}, 1, 30 * s},
		{"2026-03-25", 24, 1, 0, monitors.IncidentTally{Count: 1, Duration: 20*time.Hour + 25*time.Minute}, monitors.IncidentTally{}, 0, 0},
		{"2026-03-26", 24, 1, 1, monitors.IncidentTally{Duration: 3*time.Hour + 30*time.Minute}, monitors.IncidentTally{}, 1, 40 * s},
		{"2026-03-27", 24, 1, 1, monitors.IncidentTally{}, monitors.IncidentTally{}, 1, 20 * s},
		{"2026-03-28", 24, 1, 0, monitors.IncidentTally{}, monitors.IncidentTally{Count: 1, Duration: 20*time.Hour + 29*time.Minute + 55*s}, 0, 0},
		{"2026-03-29", 23, 1, 1, monitors.IncidentTally{}, monitors.IncidentTally{Duration: 2*time.Hour + 31*time.Minute}, 1, 60 * s},
	}
	got := make([]day, len(u.Days))
	for i, d := range u.Days {
		got[i] = day{d.Date, d.End.Sub(d.Start).Hours(), d.Occurrences, d.OnTime,
			d.Incidents[monitors.IncidentMissed], d.Incidents[monitors.IncidentFailed], d.Runs, d.RunP50}
	}
	require.Equal(t, want, got)

	require.Len(t, u.Windows, 3)
	for _, w := range u.Windows {
		require.Equal(t, 7, w.Occurrences, "window of %d days", w.Days)
		require.Equal(t, 5, w.OnTime, "window of %d days", w.Days)
		require.Equal(t, monitors.IncidentTally{Count: 1, Duration: 23*time.Hour + 55*time.Minute}, w.Incidents[monitors.IncidentMissed])
		require.Equal(t, monitors.IncidentTally{Count: 1, Duration: 23*time.Hour + 55*s}, w.Incidents[monitors.IncidentFailed])
		require.Equal(t, 5, w.Runs)
		require.Equal(t, 30*s, w.RunP50)
		require.Equal(t, 60*s, w.RunP95)
		r, ok := w.Ratio()
		require.True(t, ok)
		require.InDelta(t, 5.0/7, r, 1e-9)
	}
	require.Equal(t, []int{7, 30, 90}, []int{u.Windows[0].Days, u.Windows[1].Days, u.Windows[2].Days})
}
