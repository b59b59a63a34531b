package monitors_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// TestStateMachineInvariants drives random monitors through random pings
// and ticks and checks what the evaluator relies on: after time is applied
// at now, the next deadline is strictly later (so a due monitor never spins),
// and applying time before the deadline changes nothing, with or without an
// outage of Vigil ending now (so NextDeadline and ApplyTime agree on every
// rule, holds included).
func TestStateMachineInvariants(t *testing.T) {
	t.Parallel()
	specs := []monitors.ScheduleSpec{
		{Kind: monitors.ScheduleCron, Expr: "*/5 * * * *"},
		{Kind: monitors.ScheduleCron, Expr: "0 * * * *", TZ: "Europe/Berlin"},
		{Kind: monitors.ScheduleCron, Expr: "30 2 * * *", TZ: "America/New_York"},
		{Kind: monitors.ScheduleInterval, EverySeconds: 90},
	}
	kinds := []monitors.PingKind{monitors.PingStart, monitors.PingSuccess, monitors.PingFail, monitors.PingLog, monitors.PingSkip, monitors.PingCancel}
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		m := &monitors.Monitor{ID: "m", Name: "job", Schedule: specs[r.IntN(len(specs))],
			GraceSeconds: int64(1 + r.IntN(600)), MaxRuntimeSeconds: int64(r.IntN(1200)), DeadlineSeconds: int64(r.IntN(2) * r.IntN(7200)),
			AlertOnFailure:   []monitors.AlertOnFailure{monitors.AlertFinal, monitors.AlertEveryAttempt, monitors.AlertNever}[r.IntN(3)],
			FailureThreshold: 1 + r.IntN(3), RecoveryThreshold: 1 + r.IntN(3)}
		// The run rules, each on for some monitors.
		if r.IntN(2) == 0 {
			m.MinRuntimeSeconds = int64(r.IntN(int(m.MaxRuntime() / time.Second)))
		}
		if m.Schedule.Kind != monitors.ScheduleInterval && r.IntN(2) == 0 {
			m.EarlySeconds = int64(1 + r.IntN(900))
		}
		if r.IntN(2) == 0 {
			m.TooOften = monitors.TooOftenAlert
		}
		m.ApplyDefaults()
		require.NoError(t, m.Validate())
		now := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
		open := map[monitors.IncidentKind]bool{}
		check := func(tr *monitors.Transition) {
			for _, c := range tr.Incidents {
				switch c.Op {
				case monitors.IncidentOpen:
					require.False(t, open[c.Kind], "seed %d: %s opened twice", seed, c.Kind)
					open[c.Kind] = true
				case monitors.IncidentResolve:
					require.True(t, open[c.Kind], "seed %d: %s resolved while not open", seed, c.Kind)
					delete(open, c.Kind)
				case monitors.IncidentUpdate:
					require.True(t, open[c.Kind], "seed %d: %s updated while not open", seed, c.Kind)
				case monitors.IncidentClose:
					require.True(t, open[c.Kind], "seed %d: %s closed while not open", seed, c.Kind)
					delete(open, c.Kind)
				}
			}
			require.Equal(t, len(open), len(m.State.Open), "seed %d", seed)
			require.Equal(t, len(open) > 0 && !m.Paused && !m.Undeclared(), m.State.Status == monitors.StatusDown, "seed %d: status %s", seed, m.State.Status)
			st := &m.State
			require.LessOrEqual(t, len(st.Retries), monitors.MaxRetryChains, "seed %d", seed)
			require.LessOrEqual(t, len(st.Ran), monitors.MaxRanOccs, "seed %d", seed)
			for i := 1; i < len(st.Ran); i++ {
				require.True(t, st.Ran[i].At.After(st.Ran[i-1].At), "seed %d: occurrences that ran out of order", seed)
			}
			if len(open) == 0 && !m.Paused && !m.Undeclared() {
				require.Equal(t, len(st.Retries) > 0, st.Status == monitors.StatusRetrying, "seed %d: status %s", seed, st.Status)
			}
			require.Equal(t, open[monitors.IncidentMissed], st.Missed != nil, "seed %d: what the missed incident is about is kept while it is open", seed)
			for i, d := range st.DeadlineDone {
				require.True(t, d.After(st.DeadlineOcc), "seed %d: settled occurrence %s not after the one awaited, %s", seed, d, st.DeadlineOcc)
				if i > 0 {
					require.True(t, d.After(st.DeadlineDone[i-1]), "seed %d: settled occurrences out of order", seed)
				}
			}
		}
		for step := 0; step < 200; step++ {
			now = now.Add(time.Duration(r.IntN(3600)) * time.Second)
			switch n := r.IntN(10); {
			case n < 6:
				p := &monitors.Ping{Kind: kinds[r.IntN(len(kinds))], At: now}
				if r.IntN(2) == 0 {
					p.RID = []string{"a", "b", "c"}[r.IntN(3)]
				}
				if r.IntN(3) == 0 {
					p.Attempt = 1 + r.IntN(4)
				}
				if r.IntN(2) == 0 {
					// The occurrence the ping names: mostly a recent one,
					// sometimes hours old (a retry chain), or off the
					// schedule.
					sa := now.Add(-time.Duration(r.IntN(4*3600)) * time.Second)
					if r.IntN(4) != 0 {
						sa = sa.Truncate(5 * time.Minute)
					}
					p.ScheduledAt = &sa
				}
				if r.IntN(4) == 0 {
					d := int64(r.IntN(3600 * 1000))
					p.DurationMS = &d
				}
				if p.Kind == monitors.PingFail && r.IntN(2) == 0 {
					ra := now.Add(time.Duration(1+r.IntN(3600)) * time.Second)
					p.RetryAt = &ra
				}
				tr, err := monitors.ApplyPing(m, p)
				require.NoError(t, err)
				check(tr)
			case n < 9:
				// The evaluator applies time only at or after the deadline,
				// sometimes after an outage of its own that ends now.
				var opts monitors.TimeOptions
				if r.IntN(4) == 0 {
					opts = monitors.TimeOptions{OutageStart: now.Add(-time.Duration(1+r.IntN(6*3600)) * time.Second), OutageEnd: now}
				}
				if d := m.NextDeadlineAt; d != nil && !d.After(now) {
					tr, err := monitors.ApplyTime(m, now, opts)
					require.NoError(t, err)
					check(tr)
					if nd := m.NextDeadlineAt; nd != nil {
						require.True(t, nd.After(now), "seed %d step %d: deadline %s not after %s", seed, step, nd, now)
					}
				} else {
					before := m.State
					tr, err := monitors.ApplyTime(m, now, opts)
					require.NoError(t, err)
					require.True(t, tr.Empty(), "seed %d: time before the deadline changed something", seed)
					require.Equal(t, before.Status, m.State.Status)
				}
			default:
				var tr *monitors.Transition
				var err error
				held := m.State.Held
				switch {
				case m.Undeclared():
					tr, err = monitors.Redeclare(m, now)
				case r.IntN(2) == 0:
					m.Source = "src"
					tr, err = monitors.Undeclare(m, now)
				case m.Paused:
					tr, err = monitors.Resume(m, now)
				default:
					tr, err = monitors.Pause(m, now)
				}
				for _, c := range tr.Incidents {
					if _, wasHeld := held[c.Kind]; c.Op == monitors.IncidentClose && !wasHeld {
						// A held incident (a flapping monitor's) was never
						// notified: pausing closes it without a word.
						require.True(t, m.Undeclared(), "seed %d: only undeclaring closes incidents", seed)
					}
				}
				if m.Undeclared() {
					require.Nil(t, m.NextDeadlineAt, "seed %d: an undeclared monitor expects nothing", seed)
					require.Empty(t, m.State.Open)
				}
				require.NoError(t, err)
				check(tr)
				if m.Paused {
					require.Nil(t, m.NextDeadlineAt)
					require.Empty(t, open)
				}
			}
		}
	}
}
