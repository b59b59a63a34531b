package monitors

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// notices returns the monitor notices of tr.
func notices(tr *Transition) []IncidentEventKind {
	var out []IncidentEventKind
	for _, c := range tr.Incidents {
		if c.Op == MonitorNotice {
			out = append(out, c.Event)
		}
	}
	return out
}

func opens(tr *Transition) []IncidentKind {
	var out []IncidentKind
	for _, c := range tr.Incidents {
		if c.Op == IncidentOpen {
			out = append(out, c.Kind)
		}
	}
	return out
}

// TestLateWarning is the table of the late rule: a monitor.late notice
// halfway through the grace of an occurrence with no ping, once per
// occurrence, before the missed incident; none without a channel that
// takes it, none in maintenance, none when the missed incident is due at
// the same time, and none for an occurrence a ping covered.
func TestLateWarning(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC) // the nightly run
	newMonitor := func(late bool) *Monitor {
		m := &Monitor{ID: "m", Name: "nightly", Schedule: ScheduleSpec{Kind: ScheduleCron, Expr: "0 2 * * *"},
			GraceSeconds: 600, NotifyLate: late}
		m.ApplyDefaults()
		_, err := ApplyPing(m, &Ping{Kind: PingSuccess, At: t0.Add(-24 * time.Hour)})
		require.NoError(t, err)
		require.Equal(t, t0, m.State.Expected)
		return m
	}
	apply := func(m *Monitor, at time.Time) *Transition {
		t.Helper()
		tr, err := ApplyTime(m, at, TimeOptions{})
		require.NoError(t, err)
		return tr
	}
	type step struct {
		at      time.Duration // after t0
		notices []IncidentEventKind
		opens   []IncidentKind
	}
	late := []IncidentEventKind{EventMonitorLate}
	cases := []struct {
		name   string
		late   bool
		maint  []Period
		ping   time.Duration // a success this long after t0, when set
		snooze bool          // snoozed for the night
		parent bool          // a monitor it depends on has an open incident
		flap   bool          // flapping
		steps  []step
	}{
		{name: "once, halfway, before the missed incident", late: true, steps: []step{
			{at: 4 * time.Minute},
			{at: 5 * time.Minute, notices: late},
			{at: 6 * time.Minute},
			{at: 10 * time.Minute, opens: []IncidentKind{IncidentMissed}},
			{at: 20 * time.Minute},
		}},
		{name: "no channel takes it", late: false, steps: []step{
			{at: 5 * time.Minute},
			{at: 10 * time.Minute, opens: []IncidentKind{IncidentMissed}},
		}},
		{name: "the evaluator came after the grace: no warning with the page", late: true, steps: []step{
			{at: 11 * time.Minute, opens: []IncidentKind{IncidentMissed}},
		}},
		{name: "a ping first: nothing", late: true, ping: 3 * time.Minute, steps: []step{
			{at: 5 * time.Minute},
			{at: 10 * time.Minute},
		}},
		{name: "snoozed: nothing", late: true, snooze: true, steps: []step{
			{at: 5 * time.Minute},
			{at: 10 * time.Minute, opens: []IncidentKind{IncidentMissed}},
		}},
		{name: "suppressed under a parent: nothing, as for its incident", late: true, parent: true, steps: []step{
			{at: 5 * time.Minute},
			{at: 10 * time.Minute, opens: []IncidentKind{IncidentMissed}},
		}},
		{name: "flapping: nothing, as for its incident", late: true, flap: true, steps: []step{
			{at: 5 * time.Minute},
			{at: 10 * time.Minute, opens: []IncidentKind{IncidentMissed}},
		}},
		{name: "in maintenance: nothing, and a fresh grace after", late: true,
			maint: []Period{{Start: t0.Add(-time.Hour), End: t0.Add(time.Hour)}}, steps: []step{
				{at: 5 * time.Minute},
				{at: 10 * time.Minute},
				{at: 70 * time.Minute, opens: []IncidentKind{IncidentMissed}},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMonitor(c.late)
			m.Maintenance = c.maint
			if c.snooze {
				until := t0.Add(12 * time.Hour)
				m.SnoozedUntil = &until
			}
			if c.parent {
				m.Parents = []ParentIncident{{MonitorID: "db", IncidentID: "inc-db", Kind: IncidentMissed}}
			}
			if c.flap {
				m.State.Flapping, m.State.FlapLast = t0.Add(-time.Minute), t0.Add(-time.Minute)
			}
			if c.ping > 0 {
				_, err := ApplyPing(m, &Ping{Kind: PingSuccess, At: t0.Add(c.ping)})
				require.NoError(t, err)
			}
			for _, st := range c.steps {
				tr := apply(m, t0.Add(st.at))
				require.Equal(t, st.notices, notices(tr), "at +%s", st.at)
				require.Equal(t, st.opens, opens(tr), "at +%s", st.at)
			}
		})
	}

	// The next night's occurrence gets its own warning.
	m := newMonitor(true)
	require.Equal(t, t0.Add(5*time.Minute), *m.NextDeadline(), "the warning is the next deadline")
	require.Equal(t, late, notices(apply(m, t0.Add(5*time.Minute))))
	_, err := ApplyPing(m, &Ping{Kind: PingSuccess, At: t0.Add(7 * time.Minute)})
	require.NoError(t, err)
	next := t0.Add(24 * time.Hour)
	require.Equal(t, next.Add(5*time.Minute), *m.NextDeadline())
	require.Empty(t, notices(apply(m, next.Add(5*time.Minute-time.Second))))
	require.Equal(t, late, notices(apply(m, next.Add(5*time.Minute))))
}

// TestFlapping is the table of the flapping rule: the opening after
// FlapThreshold resolves within FlapWindow sends one monitor.flapping
// notice; later openings and resolves send nothing more (they open held
// and close without a word); a FlapWindow without an
// opening sends one monitor.stable notice, and the count starts again.
func TestFlapping(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	m := &Monitor{ID: "m", Name: "sync", Schedule: ScheduleSpec{Kind: ScheduleInterval, EverySeconds: 3600}, GraceSeconds: 60}
	m.ApplyDefaults()
	ping := func(kind PingKind, at time.Time) *Transition {
		t.Helper()
		tr, err := ApplyPing(m, &Ping{Kind: kind, At: at})
		require.NoError(t, err)
		return tr
	}
	at := t0
	cycle := func() (*Transition, *Transition) {
		f := ping(PingFail, at)
		s := ping(PingSuccess, at.Add(time.Minute))
		at = at.Add(10 * time.Minute)
		return f, s
	}
	for i := range FlapThreshold {
		f, s := cycle()
		require.Equal(t, []IncidentKind{IncidentFailed}, opens(f), "cycle %d", i)
		require.Empty(t, notices(f), "cycle %d", i)
		require.Empty(t, notices(s))
		require.False(t, m.State.IsFlapping())
	}
	f, _ := cycle()
	require.Equal(t, []IncidentKind{IncidentFailed}, opens(f), "the incident is still recorded")
	require.Equal(t, []IncidentEventKind{EventMonitorFlapping}, notices(f), "one notice")
	require.True(t, m.State.IsFlapping())
	for range 3 {
		f, s := cycle()
		require.Equal(t, []IncidentKind{IncidentFailed}, opens(f))
		require.Empty(t, notices(f), "quiet while flapping")
		require.Empty(t, notices(s))
	}
	last := at.Add(-10 * time.Minute) // the last opening
	require.Equal(t, last.Add(FlapWindow), *m.NextDeadline(), "stable is a time rule")
	tr, err := ApplyTime(m, last.Add(FlapWindow-time.Second), TimeOptions{})
	require.NoError(t, err)
	require.Empty(t, notices(tr))
	tr, err = ApplyTime(m, last.Add(FlapWindow), TimeOptions{})
	require.NoError(t, err)
	require.Equal(t, []IncidentEventKind{EventMonitorStable}, notices(tr), "one notice when stable")
	require.False(t, m.State.IsFlapping())
	require.Contains(t, tr.Incidents[0].Summary, "no incident open")

	// Openings spread wider than the window never flap.
	at = last.Add(2 * FlapWindow)
	for i := range 3 * FlapThreshold {
		f := ping(PingFail, at)
		require.Empty(t, notices(f), "opening %d", i)
		ping(PingSuccess, at.Add(time.Minute))
		at = at.Add(FlapWindow / (FlapThreshold - 1))
	}
	require.False(t, m.State.IsFlapping())
}

// TestFlappingHoldsAndReleases: an incident that opens while its monitor
// is flapping is held, not dropped; one still open when the monitor is
// stable again is notified then (a release), once, so an outage that
// began while flapping is not kept from a channel that takes no monitor
// notices (PagerDuty, Opsgenie). A snooze that ends while flapping
// releases nothing until the monitor is stable; one that resolves while
// held closes without a word.
func TestFlappingHoldsAndReleases(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	newFlapping := func(t *testing.T) (*Monitor, time.Time) {
		m := &Monitor{ID: "m", Name: "sync", Schedule: ScheduleSpec{Kind: ScheduleInterval, EverySeconds: 86400}, GraceSeconds: 60}
		m.ApplyDefaults()
		at := t0
		for range FlapThreshold + 1 {
			_, err := ApplyPing(m, &Ping{Kind: PingFail, At: at})
			require.NoError(t, err)
			if m.State.IsFlapping() {
				break
			}
			_, err = ApplyPing(m, &Ping{Kind: PingSuccess, At: at.Add(time.Minute)})
			require.NoError(t, err)
			at = at.Add(10 * time.Minute)
		}
		require.True(t, m.State.IsFlapping())
		return m, at
	}
	changes := func(tr *Transition) []string {
		var out []string
		for _, c := range tr.Incidents {
			s := string(c.Op) + " " + string(c.Kind)
			if c.Op == MonitorNotice {
				s = string(c.Event)
			}
			if c.Held {
				s += " held"
			}
			out = append(out, s)
		}
		return out
	}

	t.Run("the opening that starts flapping is held, and released when stable", func(t *testing.T) {
		m, at := newFlapping(t)
		require.Contains(t, m.State.Held, IncidentFailed, "held, not dropped")
		stable := at.Add(FlapWindow)
		require.Equal(t, stable, *m.NextDeadline())
		tr, err := ApplyTime(m, stable, TimeOptions{})
		require.NoError(t, err)
		require.Equal(t, []string{"monitor.stable", "release failed"}, changes(tr))
		require.Empty(t, m.State.Held)
		tr, err = ApplyTime(m, stable.Add(time.Hour), TimeOptions{})
		require.NoError(t, err)
		require.Empty(t, changes(tr), "once")
	})
	t.Run("held while flapping, resolved while flapping: closed without a word", func(t *testing.T) {
		m, at := newFlapping(t)
		tr, err := ApplyPing(m, &Ping{Kind: PingSuccess, At: at.Add(time.Minute)})
		require.NoError(t, err)
		require.Equal(t, []string{"close failed"}, changes(tr))
		tr, err = ApplyPing(m, &Ping{Kind: PingFail, At: at.Add(10 * time.Minute)})
		require.NoError(t, err)
		require.Equal(t, []string{"open failed held"}, changes(tr))
	})
	t.Run("a snooze that ends while flapping waits for stable", func(t *testing.T) {
		m, at := newFlapping(t)
		_, err := ApplyPing(m, &Ping{Kind: PingSuccess, At: at.Add(time.Minute)})
		require.NoError(t, err)
		_, err = Snooze(m, at.Add(20*time.Minute), at.Add(2*time.Minute))
		require.NoError(t, err)
		tr, err := ApplyPing(m, &Ping{Kind: PingFail, At: at.Add(5 * time.Minute)})
		require.NoError(t, err)
		require.Equal(t, []string{"open failed held"}, changes(tr))
		tr, err = ApplyTime(m, at.Add(20*time.Minute), TimeOptions{})
		require.NoError(t, err)
		require.Empty(t, changes(tr), "still flapping: still held")
		require.Contains(t, m.State.Held, IncidentFailed)
		stable := at.Add(5 * time.Minute).Add(FlapWindow)
		require.Equal(t, stable, *m.NextDeadline())
		tr, err = ApplyTime(m, stable, TimeOptions{})
		require.NoError(t, err)
		require.Equal(t, []string{"monitor.stable", "release failed"}, changes(tr))
	})
}

// TestFlappingCountsNotifiedIncidents: incidents that closed while held
// (snoozed, or suppressed under a parent) sent nothing, so they do not
// count toward flapping: the first failure after a snooze in which the
// job failed and recovered again and again is notified, not held as
// flapping.
func TestFlappingCountsNotifiedIncidents(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, held := range []string{"snoozed", "suppressed"} {
		t.Run(held, func(t *testing.T) {
			m := &Monitor{ID: "m", Name: "sync", Schedule: ScheduleSpec{Kind: ScheduleInterval, EverySeconds: 86400}, GraceSeconds: 60}
			m.ApplyDefaults()
			end := t0.Add(40 * time.Minute)
			if held == "snoozed" {
				_, err := Snooze(m, end, t0)
				require.NoError(t, err)
			}
			at := t0
			for range FlapThreshold + 1 {
				if held == "suppressed" {
					m.Parents = []ParentIncident{{MonitorID: "db", IncidentID: "inc-db", Kind: IncidentMissed}}
				}
				tr, err := ApplyPing(m, &Ping{Kind: PingFail, At: at})
				require.NoError(t, err)
				require.Equal(t, []IncidentKind{IncidentFailed}, opens(tr))
				require.True(t, tr.Incidents[0].Held)
				_, err = ApplyPing(m, &Ping{Kind: PingSuccess, At: at.Add(time.Minute)})
				require.NoError(t, err)
				at = at.Add(5 * time.Minute)
			}
			m.Parents = nil
			_, err := ApplyTime(m, end, TimeOptions{})
			require.NoError(t, err)
			tr, err := ApplyPing(m, &Ping{Kind: PingFail, At: end.Add(time.Minute)})
			require.NoError(t, err)
			require.Empty(t, notices(tr), "no flapping notice")
			require.Len(t, tr.Incidents, 1)
			require.False(t, tr.Incidents[0].Held, "notified")
			require.False(t, m.State.IsFlapping())
		})
	}
}
