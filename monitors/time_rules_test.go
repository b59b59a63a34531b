package monitors

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTimeRulesOneList checks that every kind of time rule is both listed
// by timeRules (so NextDeadline sees it) and fired by ApplyTime: for each
// kind, a monitor whose only rule is of that kind has its next deadline at
// the rule's time, nothing happens a second before it, and the rule fires
// at it. A kind added to the list without a fixture here fails the test;
// ApplyTime fires nothing that is not in the list. (TestStateMachineInvariants
// checks the same of random states: nothing happens before NextDeadline.)
func TestTimeRulesOneList(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC)
	base := func() *Monitor {
		m := &Monitor{ID: "m", Name: "job", Schedule: ScheduleSpec{Kind: ScheduleCron, Expr: "0 2 * * *"},
			GraceSeconds: 300, MaxRuntimeSeconds: 600}
		m.ApplyDefaults()
		m.State.Status = StatusUp
		return m
	}
	fixtures := map[ruleKind]struct {
		m      func() *Monitor
		at     time.Time
		want   IncidentKind      // opened when the rule fires; "" for none
		notice IncidentEventKind // the monitor notice it sends, if any
	}{
		ruleRetry: {func() *Monitor {
			m := base()
			m.State.Status = StatusRetrying
			m.State.Retries = []RetryWait{{At: t0.Add(time.Hour), FailAt: t0, Occ: t0}}
			return m
		}, t0.Add(time.Hour + 5*time.Minute), IncidentMissed, ""},
		ruleExpected: {func() *Monitor {
			m := base()
			m.State.Expected = t0
			return m
		}, t0.Add(5 * time.Minute), IncidentMissed, ""},
		ruleStuck: {func() *Monitor {
			m := base()
			m.State.Status = StatusRunning
			m.State.Runs = []OpenRun{{Seq: 1, StartedAt: t0}}
			m.State.RunSeq = 1
			return m
		}, t0.Add(10 * time.Minute), IncidentStuck, ""},
		ruleAbandon: {func() *Monitor {
			m := base()
			m.State.Status = StatusDown
			m.State.Runs = []OpenRun{{Seq: 1, StartedAt: t0, Stuck: true}}
			m.State.RunSeq = 1
			m.State.Open = map[IncidentKind]time.Time{IncidentStuck: t0.Add(10 * time.Minute)}
			return m
		}, t0.Add(10*time.Minute + AbandonAfter), "", ""},
		ruleDeadline: {func() *Monitor {
			m := base()
			m.DeadlineSeconds = 3600
			m.State.DeadlineOcc = t0
			return m
		}, t0.Add(time.Hour), IncidentDeadline, ""},
		ruleRelease: {func() *Monitor {
			m := base()
			m.State.Status = StatusDown
			until := t0.Add(time.Hour)
			m.SnoozedUntil = &until
			m.State.Open = map[IncidentKind]time.Time{IncidentFailed: t0}
			m.State.Held = map[IncidentKind]HeldNotice{IncidentFailed: {Snooze: true}}
			return m
		}, t0.Add(time.Hour), "", ""},
		ruleLate: {func() *Monitor {
			m := base()
			m.NotifyLate = true
			m.State.Expected = t0
			return m
		}, t0.Add(150 * time.Second), "", EventMonitorLate},
		ruleStable: {func() *Monitor {
			m := base()
			m.State.Flapping, m.State.FlapLast = t0.Add(-time.Hour), t0
			return m
		}, t0.Add(FlapWindow), "", EventMonitorStable},
	}
	require.Len(t, fixtures, int(numRuleKinds), "a fixture for every kind of time rule")
	for kind, fx := range fixtures {
		m := fx.m()
		var of []timeRule
		for _, r := range m.timeRules() {
			if r.kind == kind {
				of = append(of, r)
			} else {
				// A run not yet stuck is also watched for abandon, later.
				require.True(t, r.at.After(fx.at), "kind %d: another rule %+v comes first", kind, r)
			}
		}
		require.Len(t, of, 1, "kind %d: %+v", kind, m.timeRules())
		require.Equal(t, fx.at, of[0].at, "kind %d", kind)
		require.Equal(t, fx.at, *m.NextDeadline(), "kind %d", kind)

		tr, err := ApplyTime(m, fx.at.Add(-time.Second), TimeOptions{})
		require.NoError(t, err)
		require.True(t, tr.Empty(), "kind %d: fired before its time: %+v", kind, tr)

		tr, err = ApplyTime(m, fx.at, TimeOptions{})
		require.NoError(t, err)
		require.False(t, tr.Empty(), "kind %d: listed, but ApplyTime does not fire it", kind)
		var opened []IncidentKind
		var notices []IncidentEventKind
		for _, c := range tr.Incidents {
			switch c.Op {
			case IncidentOpen:
				opened = append(opened, c.Kind)
			case MonitorNotice:
				notices = append(notices, c.Event)
			}
		}
		switch {
		case fx.want != "":
			require.Equal(t, []IncidentKind{fx.want}, opened, "kind %d", kind)
		case kind == ruleRelease:
			require.Equal(t, IncidentRelease, tr.Incidents[0].Op, "kind %d", kind)
		case fx.notice != "":
			require.Empty(t, opened, "kind %d", kind)
			require.Equal(t, []IncidentEventKind{fx.notice}, notices, "kind %d", kind)
		default:
			require.Empty(t, m.State.Runs, "kind %d: the run is abandoned", kind)
		}
		for _, r := range m.timeRules() {
			require.NotEqual(t, kind, r.kind, "kind %d: fired once, and listed no more", kind)
		}
	}
}

// TestAbandonNotDelayedByHold: a run started before an outage of Vigil
// whose stuck rule the outage holds is still abandoned at its own time
// when that comes after the outage but before the hold ends. NextDeadline
// used to consider only the stuck rule of a run that was not stuck yet,
// moved to the hold's end, so the evaluator came back after the time at
// which ApplyTime would already abandon the run.
func TestAbandonNotDelayedByHold(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC)
	m := &Monitor{ID: "m", Name: "job", Schedule: ScheduleSpec{Kind: ScheduleInterval, EverySeconds: 7 * 24 * 3600},
		GraceSeconds: 2 * 3600, MaxRuntimeSeconds: 3600}
	m.ApplyDefaults()
	_, err := ApplyPing(m, &Ping{Kind: PingStart, At: t0})
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Hour), *m.NextDeadline(), "stuck after the max runtime")

	// Vigil is down from 50 minutes after the start until 24h30m after it:
	// the stuck rule (1h) came due inside the outage and waits for a fresh
	// grace window, until 26h30m.
	outage := TimeOptions{OutageStart: t0.Add(50 * time.Minute), OutageEnd: t0.Add(24*time.Hour + 30*time.Minute)}
	tr, err := ApplyTime(m, outage.OutageEnd, outage)
	require.NoError(t, err)
	require.Empty(t, tr.Incidents)
	require.Equal(t, t0.Add(26*time.Hour+30*time.Minute), m.State.Hold.Until)

	abandon := t0.Add(time.Hour + AbandonAfter) // 25h: after the outage, before the hold ends
	require.Equal(t, abandon, *m.NextDeadline())
	tr, err = ApplyTime(m, abandon.Add(-time.Second), TimeOptions{})
	require.NoError(t, err)
	require.True(t, tr.Empty())
	tr, err = ApplyTime(m, abandon, TimeOptions{})
	require.NoError(t, err)
	require.Len(t, tr.Runs, 1)
	require.Equal(t, RunAbandoned, tr.Runs[0].Run.Outcome)
	require.Empty(t, m.State.Runs)
}
