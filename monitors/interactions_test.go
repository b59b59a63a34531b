package monitors_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// TestHeldMaintenanceAndRunRules is the table of how the held
// notifications meet maintenance windows and the run rules: a snooze that
// ends inside a window still notifies the incident that opened before it
// (a window keeps what was already open), a missed occurrence held by a
// window opens suppressed when the window ends with the parent still
// down, a parent in maintenance (no incident) suppresses nothing, and
// too_fast, early and too_often are held and released as any incident is,
// and open nothing in a window.
func TestHeldMaintenanceAndRunRules(t *testing.T) {
	t.Parallel()
	parent := []monitors.ParentIncident{{MonitorID: "p", IncidentID: "pi", Kind: monitors.IncidentMissed}}
	d := func(ms int64) *int64 { return &ms }
	type step struct {
		at      string
		ping    monitors.PingKind // "" for time
		dur     *int64            // the ping's duration_ms
		parents bool
		snooze  string // snooze until this, before the step
		want    []string
	}
	hourly := func(m *monitors.Monitor) {
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}
		m.GraceSeconds = 300
	}
	nightly := func(m *monitors.Monitor) {
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *"}
		m.GraceSeconds = 600
	}
	window := []monitors.Period{{Start: at("2026-03-02T10:30:00Z"), End: at("2026-03-02T12:00:00Z")}}
	cases := []struct {
		name  string
		setup func(m *monitors.Monitor)
		maint []monitors.Period
		steps []step
	}{
		{"a snooze that ends in a window notifies the incident open before it", hourly, window, []step{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, snooze: "2026-03-02T11:00:00Z", want: []string{"open failed held"}},
			{at: "2026-03-02T11:00:00Z", want: []string{"release failed"}},
		}},
		{"a window ends with the parent still down: the missed incident opens suppressed", hourly, window, []step{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingSuccess},
			// Due 11:05, in the window: held until 12:00 plus the grace.
			{at: "2026-03-02T11:05:00Z", parents: true},
			{at: "2026-03-02T12:05:00Z", parents: true, want: []string{"open missed held"}},
			{at: "2026-03-02T12:06:00Z", want: []string{"release missed"}},
		}},
		{"a parent in maintenance has no incident: the child's failure is notified", hourly, nil, []step{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, want: []string{"open failed"}},
		}},
		{"too_fast under a snooze: held, released at its end", func(m *monitors.Monitor) { hourly(m); m.MinRuntimeSeconds = 60 }, nil, []step{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingSuccess, dur: d(2000), snooze: "2026-03-02T10:30:00Z", want: []string{"open too_fast held"}},
			{at: "2026-03-02T10:30:00Z", want: []string{"release too_fast"}},
		}},
		{"too_fast under a parent: held, closed without a word by a good run", func(m *monitors.Monitor) { hourly(m); m.MinRuntimeSeconds = 60 }, nil, []step{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingSuccess, dur: d(2000), parents: true, want: []string{"open too_fast held"}},
			{at: "2026-03-02T10:30:00Z", ping: monitors.PingSuccess, dur: d(120000), parents: true, want: []string{"close too_fast"}},
		}},
		{"too_fast in a window: nothing opens", func(m *monitors.Monitor) { hourly(m); m.MinRuntimeSeconds = 60 }, window, []step{
			{at: "2026-03-02T11:00:00Z", ping: monitors.PingSuccess, dur: d(2000)},
			{at: "2026-03-02T12:30:00Z", ping: monitors.PingSuccess, dur: d(2000), want: []string{"open too_fast"}},
		}},
		{"early under a snooze: held, released at its end", func(m *monitors.Monitor) { nightly(m); m.EarlySeconds = 600 }, nil, []step{
			{at: "2026-03-02T02:00:00Z", ping: monitors.PingSuccess},
			{at: "2026-03-03T01:01:00Z", ping: monitors.PingSuccess, dur: d(60000), snooze: "2026-03-03T01:10:00Z", want: []string{"open early held"}},
			{at: "2026-03-03T01:10:00Z", want: []string{"release early"}},
		}},
		{"too_often under a parent: held, released when the parent recovers", func(m *monitors.Monitor) { hourly(m); m.TooOften = monitors.TooOftenAlert }, nil, []step{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingSuccess, parents: true},
			{at: "2026-03-02T10:10:00Z", ping: monitors.PingSuccess, parents: true, want: []string{"open too_often held"}},
			{at: "2026-03-02T10:11:00Z", parents: true},
			{at: "2026-03-02T10:12:00Z", want: []string{"release too_often"}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &monitors.Monitor{ID: "m1", Name: "job"}
			tc.setup(m)
			m.ApplyDefaults()
			require.NoError(t, m.Validate())
			m.Maintenance = tc.maint
			for i, st := range tc.steps {
				now := at(st.at)
				m.Parents = nil
				if st.parents {
					m.Parents = parent
				}
				if st.snooze != "" {
					_, err := monitors.Snooze(m, at(st.snooze), now)
					require.NoError(t, err)
				}
				var (
					tr  *monitors.Transition
					err error
				)
				if st.ping != "" {
					tr, err = monitors.ApplyPing(m, &monitors.Ping{Kind: st.ping, At: now, DurationMS: st.dur})
				} else {
					if dl := m.NextDeadlineAt; dl == nil || now.Before(*dl) {
						tr, err = monitors.ApplyTime(m, now, monitors.TimeOptions{})
						require.NoError(t, err)
						require.Empty(t, heldChanges(tr), "step %d: time before the deadline changed something", i)
						require.Empty(t, st.want, "step %d: wanted changes before the deadline (%v)", i, m.NextDeadlineAt)
						continue
					}
					tr, err = monitors.ApplyTime(m, now, monitors.TimeOptions{})
				}
				require.NoError(t, err)
				require.Equal(t, st.want, heldChanges(tr), "step %d at %s", i, st.at)
			}
		})
	}
}
