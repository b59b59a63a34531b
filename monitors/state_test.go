package monitors_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// scenario drives one monitor through pings and ticks with a clock the test
// sets, collecting the incident changes.
type scenario struct {
	t   *testing.T
	m   *monitors.Monitor
	log []monitors.IncidentChange
	run []monitors.Run
}

func newScenario(t *testing.T, m *monitors.Monitor) *scenario {
	t.Helper()
	m.ID = "m1"
	if m.Name == "" {
		m.Name = "job"
	}
	m.ApplyDefaults()
	require.NoError(t, m.Validate())
	return &scenario{t: t, m: m}
}

type pingOpt func(*monitors.Ping)

func rid(r string) pingOpt        { return func(p *monitors.Ping) { p.RID = r } }
func attempt(n int) pingOpt       { return func(p *monitors.Ping) { p.Attempt = n } }
func retryAt(t time.Time) pingOpt { return func(p *monitors.Ping) { p.RetryAt = &t } }
func exitCode(c int) pingOpt      { return func(p *monitors.Ping) { p.ExitCode = &c } }
func durationMS(d int64) pingOpt  { return func(p *monitors.Ping) { p.DurationMS = &d } }
func at(s string) time.Time       { return mustTime(s) }
func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func (s *scenario) ping(kind monitors.PingKind, when time.Time, opts ...pingOpt) *monitors.Transition {
	s.t.Helper()
	p := &monitors.Ping{Kind: kind, At: when}
	for _, o := range opts {
		o(p)
	}
	tr, err := monitors.ApplyPing(s.m, p)
	require.NoError(s.t, err)
	s.record(tr)
	return tr
}

func (s *scenario) tick(now time.Time) *monitors.Transition {
	s.t.Helper()
	return s.tickOpts(now, monitors.TimeOptions{})
}

func (s *scenario) tickOpts(now time.Time, opts monitors.TimeOptions) *monitors.Transition {
	s.t.Helper()
	// The evaluator only applies time to a due monitor; applying it early
	// must change nothing, which every tick also checks.
	if d := s.m.NextDeadlineAt; d == nil || now.Before(*d) {
		before := s.m.State
		tr, err := monitors.ApplyTime(s.m, now, opts)
		require.NoError(s.t, err)
		if opts.OutageEnd.IsZero() {
			require.True(s.t, tr.Empty(), "time before the deadline changed something: %+v", tr)
			require.Equal(s.t, before.Status, s.m.State.Status)
		}
		s.record(tr)
		return tr
	}
	tr, err := monitors.ApplyTime(s.m, now, opts)
	require.NoError(s.t, err)
	s.record(tr)
	return tr
}

// advance applies every deadline that falls before until.
func (s *scenario) advance(until time.Time) {
	s.t.Helper()
	for d := s.deadline(); !d.IsZero() && d.Before(until); d = s.deadline() {
		s.tick(d)
	}
}

func (s *scenario) record(tr *monitors.Transition) {
	s.log = append(s.log, tr.Incidents...)
	for _, rc := range tr.Runs {
		s.run = append(s.run, rc.Run)
	}
}

// opened returns the kinds opened so far, in order.
func (s *scenario) opened() []monitors.IncidentKind {
	var out []monitors.IncidentKind
	for _, c := range s.log {
		if c.Op == monitors.IncidentOpen {
			out = append(out, c.Kind)
		}
	}
	return out
}

func (s *scenario) resolved() []monitors.IncidentKind {
	var out []monitors.IncidentKind
	for _, c := range s.log {
		if c.Op == monitors.IncidentResolve {
			out = append(out, c.Kind)
		}
	}
	return out
}

func (s *scenario) status(now time.Time) monitors.Status { return s.m.StatusAt(now) }

func (s *scenario) deadline() time.Time {
	if s.m.NextDeadlineAt == nil {
		return time.Time{}
	}
	return *s.m.NextDeadlineAt
}

func hourly() *monitors.Monitor {
	return &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *"}}
}

func TestNewMonitorExpectsNothing(t *testing.T) {
	t.Parallel()
	s := newScenario(t, hourly())
	require.Equal(t, monitors.StatusNew, s.status(at("2026-01-01T10:00:00Z")))
	require.Nil(t, s.m.NextDeadlineAt)
	s.tick(at("2026-01-05T10:00:00Z"))
	require.Empty(t, s.log)
}

func TestMissed(t *testing.T) {
	t.Parallel()
	s := newScenario(t, hourly())
	s.ping(monitors.PingSuccess, at("2026-01-01T10:00:30Z"))
	require.Equal(t, monitors.StatusUp, s.status(at("2026-01-01T10:30:00Z")))
	require.Equal(t, at("2026-01-01T11:00:00Z"), s.m.State.Expected)
	require.Equal(t, at("2026-01-01T11:05:00Z"), s.deadline(), "expected + grace 5m")

	// Past the occurrence, within grace: late, and nothing is evaluated.
	require.Equal(t, monitors.StatusLate, s.status(at("2026-01-01T11:02:00Z")))
	s.tick(at("2026-01-01T11:04:59Z"))
	require.Empty(t, s.log)

	s.tick(at("2026-01-01T11:05:00Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.opened())
	require.Contains(t, s.log[0].Summary, "job did not run at 2026-01-01 11:00 UTC (grace 5m)")
	require.Contains(t, s.log[0].Summary, "last ping: success at 2026-01-01 10:00:30 UTC")
	require.Equal(t, monitors.StatusDown, s.status(at("2026-01-01T11:05:00Z")))
	require.Nil(t, s.m.NextDeadlineAt, "one missed incident stays open until a ping")

	// Any sign of life resolves it.
	s.ping(monitors.PingStart, at("2026-01-01T11:20:00Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.resolved())
	require.Equal(t, monitors.StatusRunning, s.status(at("2026-01-01T11:20:00Z")))
}

func TestEarlyPingCountsForComingOccurrence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		expr     string
		ping     string
		expected string
	}{
		{"hourly, 30s early", "0 * * * *", "2026-01-01T10:59:30Z", "2026-01-01T12:00:00Z"},
		{"hourly, exactly 60s early", "0 * * * *", "2026-01-01T10:59:00Z", "2026-01-01T12:00:00Z"},
		{"hourly, 61s early is not", "0 * * * *", "2026-01-01T10:58:59Z", "2026-01-01T11:00:00Z"},
		{"every 5 min: a tenth of the gap is 30s", "*/5 * * * *", "2026-01-01T10:04:31Z", "2026-01-01T10:10:00Z"},
		{"every 5 min: 31s early is not", "*/5 * * * *", "2026-01-01T10:04:29Z", "2026-01-01T10:05:00Z"},
		{"on time", "0 * * * *", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newScenario(t, &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: tt.expr}})
			s.ping(monitors.PingSuccess, at(tt.ping))
			require.Equal(t, at(tt.expected), s.m.State.Expected)
		})
	}
}

func TestInterval(t *testing.T) {
	t.Parallel()
	s := newScenario(t, &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 60}, GraceSeconds: 10})
	s.ping(monitors.PingSuccess, at("2026-01-01T10:00:00Z"))
	require.Equal(t, at("2026-01-01T10:01:10Z"), s.deadline())
	s.ping(monitors.PingSuccess, at("2026-01-01T10:01:05Z"))
	require.Equal(t, at("2026-01-01T10:02:15Z"), s.deadline())
	s.tick(at("2026-01-01T10:02:15Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.opened())
	require.Contains(t, s.log[0].Summary, "did not ping within 1m of its last ping, by 2026-01-01 10:02:05 UTC")
}

func TestLogPingChangesNothing(t *testing.T) {
	t.Parallel()
	s := newScenario(t, hourly())
	s.ping(monitors.PingSuccess, at("2026-01-01T10:00:00Z"))
	before := s.m.State
	tr := s.ping(monitors.PingLog, at("2026-01-01T11:30:00Z"))
	require.True(t, tr.Empty())
	require.Equal(t, before, s.m.State)
}

func TestStuckPerRunWhileLaterRunsSkipAndSucceed(t *testing.T) {
	t.Parallel()
	m := &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "*/5 * * * *"},
		GraceSeconds: 60, MaxRuntimeSeconds: 600, Overlap: monitors.OverlapIgnore}
	s := newScenario(t, m)
	s.ping(monitors.PingStart, at("2026-01-01T10:00:00Z"), rid("A")) // hangs
	s.ping(monitors.PingStart, at("2026-01-01T10:05:00Z"), rid("B"))
	s.ping(monitors.PingSuccess, at("2026-01-01T10:05:40Z"), rid("B"))
	s.ping(monitors.PingSkip, at("2026-01-01T10:10:00Z"))
	require.Equal(t, at("2026-01-01T10:10:00Z"), s.deadline(), "A's max runtime")
	s.tick(at("2026-01-01T10:10:00Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentStuck}, s.opened())
	require.Contains(t, s.log[0].Summary, `run "A" started at 2026-01-01 10:00 UTC and has not finished after 10m`)
	last := s.run[len(s.run)-1]
	require.True(t, last.Stuck && last.RID == "A" && last.FinishedAt == nil, "the open run is written as stuck: %+v", last)

	// Later runs keep succeeding: A is still stuck.
	for i, min := range []string{"15", "20", "25"} {
		r := string(rune('C' + i))
		s.ping(monitors.PingStart, at("2026-01-01T10:"+min+":00Z"), rid(r))
		s.ping(monitors.PingSuccess, at("2026-01-01T10:"+min+":30Z"), rid(r))
	}
	require.Empty(t, s.resolved())
	require.Equal(t, monitors.StatusDown, s.status(at("2026-01-01T10:26:00Z")))

	s.ping(monitors.PingFail, at("2026-01-01T10:40:00Z"), rid("A"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentStuck}, s.resolved())
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentStuck, monitors.IncidentFailed}, s.opened())
}

func TestSevenMinuteJobOnFiveMinuteScheduleOverlaps(t *testing.T) {
	t.Parallel()
	m := &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "*/5 * * * *"}, MaxRuntimeSeconds: 600}
	s := newScenario(t, m)
	// curl users send no rid: a finish closes the oldest open run.
	s.ping(monitors.PingStart, at("2026-01-01T10:00:00Z"))
	s.ping(monitors.PingStart, at("2026-01-01T10:05:00Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentOverlap}, s.opened())
	require.Contains(t, s.log[0].Summary, "while 1 earlier run(s) were still running (the oldest, #1, started at 2026-01-01 10:00 UTC)")
	require.Equal(t, monitors.StatusDown, s.status(at("2026-01-01T10:06:00Z")))

	s.ping(monitors.PingSuccess, at("2026-01-01T10:07:00Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentOverlap}, s.resolved())
	require.EqualValues(t, 1, s.run[len(s.run)-1].Seq, "the oldest run closed")
	require.EqualValues(t, 7*60*1000, *s.run[len(s.run)-1].DurationMS)

	// The next start overlaps the second run again: a new incident.
	s.ping(monitors.PingStart, at("2026-01-01T10:10:00Z"))
	require.Len(t, s.opened(), 2)

	// With overlap ignored, no incident.
	m2 := &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "*/5 * * * *"}, MaxRuntimeSeconds: 600, Overlap: monitors.OverlapIgnore}
	s2 := newScenario(t, m2)
	s2.ping(monitors.PingStart, at("2026-01-01T10:00:00Z"))
	s2.ping(monitors.PingStart, at("2026-01-01T10:05:00Z"))
	require.Empty(t, s2.log)
}

func TestFailedFinalAndThresholds(t *testing.T) {
	t.Parallel()
	m := hourly()
	m.FailureThreshold, m.RecoveryThreshold = 2, 2
	s := newScenario(t, m)
	s.ping(monitors.PingFail, at("2026-01-01T10:00:10Z"), exitCode(3))
	require.Empty(t, s.log, "one failure is under the threshold")
	s.ping(monitors.PingSuccess, at("2026-01-01T11:00:10Z"))
	s.ping(monitors.PingFail, at("2026-01-01T12:00:10Z"), exitCode(3))
	require.Empty(t, s.log, "failures must be consecutive")
	s.ping(monitors.PingFail, at("2026-01-01T13:00:10Z"), exitCode(4))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentFailed}, s.opened())
	require.Contains(t, s.log[0].Summary, "job failed with exit status 4 at 2026-01-01 13:00:10 UTC; 2 consecutive failures")

	s.ping(monitors.PingFail, at("2026-01-01T14:00:10Z"))
	require.Equal(t, monitors.IncidentUpdate, s.log[len(s.log)-1].Op, "another failure updates the open incident")
	s.ping(monitors.PingSuccess, at("2026-01-01T15:00:10Z"))
	require.Empty(t, s.resolved())
	s.ping(monitors.PingSuccess, at("2026-01-01T16:00:10Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentFailed}, s.resolved())
	require.Equal(t, monitors.StatusUp, s.status(at("2026-01-01T16:30:00Z")))
}

func TestAlertNeverAndCancel(t *testing.T) {
	t.Parallel()
	m := hourly()
	m.AlertOnFailure = monitors.AlertNever
	s := newScenario(t, m)
	s.ping(monitors.PingFail, at("2026-01-01T10:00:10Z"))
	require.Empty(t, s.log)

	s2 := newScenario(t, hourly())
	s2.ping(monitors.PingStart, at("2026-01-01T10:00:00Z"), rid("r"))
	s2.ping(monitors.PingCancel, at("2026-01-01T10:00:05Z"), rid("r"))
	require.Empty(t, s2.log, "a cancelled run alerts no one")
	require.Equal(t, monitors.RunCancelled, s2.run[len(s2.run)-1].Outcome)
	require.Zero(t, s2.m.State.Failures)
	require.Equal(t, monitors.StatusUp, s2.status(at("2026-01-01T10:01:00Z")))
}

func TestSkipIsAliveAndClosesNoRun(t *testing.T) {
	t.Parallel()
	s := newScenario(t, hourly())
	s.ping(monitors.PingStart, at("2026-01-01T10:00:00Z"), rid("long"))
	s.ping(monitors.PingSkip, at("2026-01-01T11:00:00Z"))
	require.Len(t, s.m.State.Runs, 1, "skip closes no open run")
	require.Equal(t, at("2026-01-01T12:00:00Z"), s.m.State.Expected, "skip counts for the occurrence")
	require.Equal(t, monitors.RunSkipped, s.run[len(s.run)-1].Outcome)
}

var hangfireDelay = storetest.HangfireDelay

func TestHangfireRetriesOutlastNextOccurrence(t *testing.T) {
	t.Parallel()
	for _, mode := range []monitors.AlertOnFailure{monitors.AlertFinal, monitors.AlertEveryAttempt} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			m := hourly()
			m.AlertOnFailure = mode
			s := newScenario(t, m)
			now := at("2026-01-01T01:00:00Z")
			// Attempt 1 and ten retries, all failing; the chain takes over 4
			// hours, outlasting several hourly occurrences, which run too.
			for n := 1; n <= 11; n++ {
				s.ping(monitors.PingStart, now, attempt(n))
				now = now.Add(5 * time.Second)
				if n == 11 {
					s.ping(monitors.PingFail, now, attempt(n))
					break
				}
				next := now.Add(hangfireDelay(n))
				s.ping(monitors.PingFail, now, attempt(n), retryAt(next))
				if mode == monitors.AlertFinal {
					require.Equal(t, monitors.StatusRetrying, s.status(now))
				}
				// Time passes to the retry: the hourly occurrences run on
				// their own (and succeed), and due deadlines are applied.
				for h := now.Truncate(time.Hour).Add(time.Hour); h.Before(next); h = h.Add(time.Hour) {
					s.advance(h)
					s.ping(monitors.PingStart, h, attempt(1))
					s.ping(monitors.PingSuccess, h.Add(30*time.Second), attempt(1))
				}
				s.advance(next)
				now = next
			}
			require.True(t, now.After(at("2026-01-01T05:00:00Z")), "the chain outlasted 4 occurrences")
			switch mode {
			case monitors.AlertFinal:
				require.Equal(t, []monitors.IncidentKind{monitors.IncidentFailed}, s.opened(), "one alert, after the chain")
				require.Contains(t, s.log[0].Summary, "attempt 11, final")
			case monitors.AlertEveryAttempt:
				// Alerted at once, at the first failed attempt; the hourly
				// successes in between resolve it, so every attempt either
				// opens or updates an incident.
				require.Equal(t, monitors.IncidentOpen, s.log[0].Op)
				require.Equal(t, at("2026-01-01T01:00:05Z"), s.log[0].At)
				updates := 0
				for _, c := range s.log {
					if c.Op != monitors.IncidentResolve {
						updates++
					}
				}
				require.Equal(t, 11, updates, "each attempt opens or updates")
			}
		})
	}
}

func TestRetryThatNeverArrivesIsMissed(t *testing.T) {
	t.Parallel()
	m := &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *", TZ: "Europe/Berlin"}}
	s := newScenario(t, m)
	s.ping(monitors.PingFail, at("2026-01-01T01:00:30Z"), attempt(1), retryAt(at("2026-01-01T01:10:30Z")))
	require.Empty(t, s.log)
	require.Equal(t, at("2026-01-01T01:15:30Z"), s.deadline())
	s.tick(at("2026-01-01T01:15:30Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.opened())
	require.Contains(t, s.log[0].Summary, "retry attempt 2, announced for 2026-01-01 02:10:30 Europe/Berlin, did not arrive (grace 5m)")
	s.ping(monitors.PingSuccess, at("2026-01-01T01:30:00Z"), attempt(2))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.resolved())
}

func TestNewOccurrenceDoesNotCancelAwaitedRetry(t *testing.T) {
	t.Parallel()
	s := newScenario(t, hourly())
	s.ping(monitors.PingFail, at("2026-01-01T01:00:10Z"), attempt(3), retryAt(at("2026-01-01T02:30:00Z")))
	s.ping(monitors.PingStart, at("2026-01-01T02:00:00Z"), attempt(1))
	s.ping(monitors.PingSuccess, at("2026-01-01T02:00:30Z"), attempt(1))
	require.Len(t, s.m.State.Retries, 1, "attempt 1 of the next occurrence is not the awaited attempt 4")
	require.Equal(t, monitors.StatusRetrying, s.status(at("2026-01-01T02:01:00Z")))
	s.ping(monitors.PingSuccess, at("2026-01-01T02:30:05Z"), attempt(4))
	require.Empty(t, s.m.State.Retries)
}

func TestDeadlineMissedWhileRetriesContinue(t *testing.T) {
	t.Parallel()
	m := &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *"}, DeadlineSeconds: 3 * 3600}
	s := newScenario(t, m)
	s.ping(monitors.PingSuccess, at("2026-01-01T02:10:00Z")) // arms the deadline for the next occurrence
	require.Equal(t, at("2026-01-02T02:00:00Z"), s.m.State.DeadlineOcc)

	now := at("2026-01-02T02:00:00Z")
	for n := 1; n <= 4; n++ {
		s.ping(monitors.PingStart, now, attempt(n))
		s.ping(monitors.PingFail, now.Add(time.Minute), attempt(n), retryAt(now.Add(time.Hour)))
		now = now.Add(time.Hour)
		for d := s.deadline(); !d.IsZero() && d.Before(now); d = s.deadline() {
			s.tick(d)
		}
	}
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentDeadline}, s.opened(), "no failed (retries pending), but the deadline passed")
	require.Equal(t, at("2026-01-02T05:00:00Z"), s.log[0].At)
	require.Contains(t, s.log[0].Summary, "the occurrence of 2026-01-02 02:00 UTC had no success by 2026-01-02 05:00 UTC (deadline 3h)")
	s.ping(monitors.PingSuccess, now.Add(time.Minute), attempt(5))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentDeadline}, s.resolved())
	require.Equal(t, at("2026-01-03T02:00:00Z"), s.m.State.DeadlineOcc)
}

func TestPausedRaisesNothingAndResumeStartsClean(t *testing.T) {
	t.Parallel()
	s := newScenario(t, hourly())
	s.ping(monitors.PingStart, at("2026-01-01T10:00:00Z"))
	s.ping(monitors.PingStart, at("2026-01-01T10:01:00Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentOverlap}, s.opened())

	tr, err := monitors.Pause(s.m, at("2026-01-01T10:02:00Z"))
	require.NoError(t, err)
	s.record(tr)
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentOverlap}, s.resolved())
	require.Equal(t, monitors.StatusPaused, s.status(at("2026-01-01T10:02:00Z")))
	require.Nil(t, s.m.NextDeadlineAt)
	require.Len(t, s.run, 4, "both open runs abandoned")
	require.Equal(t, monitors.RunAbandoned, s.run[3].Outcome)

	// Pings are recorded by the store but change nothing.
	s.ping(monitors.PingFail, at("2026-01-01T11:00:00Z"))
	s.tick(at("2026-01-09T00:00:00Z"))
	require.Len(t, s.opened(), 1)
	require.Equal(t, monitors.StatusPaused, s.m.State.Status)

	tr, err = monitors.Resume(s.m, at("2026-01-09T00:00:00Z"))
	require.NoError(t, err)
	require.True(t, tr.Empty())
	require.Equal(t, monitors.StatusNew, s.status(at("2026-01-09T00:00:00Z")))
	require.Nil(t, s.m.NextDeadlineAt)
	require.Equal(t, at("2026-01-01T10:01:00Z"), s.m.State.LastPingAt, "the last ping is still shown")
}

func TestOutageGivesFreshGrace(t *testing.T) {
	t.Parallel()
	s := newScenario(t, hourly())
	s.ping(monitors.PingSuccess, at("2026-01-01T10:00:00Z"))
	// Vigil was down from 10:30 to 11:20; the 11:05 deadline fell inside.
	opts := monitors.TimeOptions{OutageStart: at("2026-01-01T10:30:00Z"), OutageEnd: at("2026-01-01T11:20:00Z")}
	s.tickOpts(at("2026-01-01T11:20:00Z"), opts)
	require.Empty(t, s.log, "no alert right after coming back")
	require.Equal(t, at("2026-01-01T11:25:00Z"), s.deadline(), "a fresh grace window from the end of the outage")
	s.tick(at("2026-01-01T11:25:00Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.opened())
	require.Nil(t, s.m.State.Hold)

	// A ping inside the fresh window means it was only our outage.
	s2 := newScenario(t, hourly())
	s2.ping(monitors.PingSuccess, at("2026-01-01T10:00:00Z"))
	s2.tickOpts(at("2026-01-01T11:20:00Z"), opts)
	s2.ping(monitors.PingSuccess, at("2026-01-01T11:21:00Z"))
	s2.tick(at("2026-01-01T11:25:00Z"))
	require.Empty(t, s2.log)
}

func TestAbandonedRunResolvesStuck(t *testing.T) {
	t.Parallel()
	s := newScenario(t, hourly())
	s.ping(monitors.PingStart, at("2026-01-01T10:00:00Z"), rid("crashed"))
	s.tick(at("2026-01-01T10:05:00Z"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentStuck}, s.opened())
	for i := 0; i < 30 && !s.deadline().IsZero() && len(s.resolved()) == 0; i++ {
		s.tick(s.deadline())
	}
	require.Contains(t, s.resolved(), monitors.IncidentStuck)
	require.Equal(t, monitors.RunAbandoned, s.run[len(s.run)-1].Outcome)
}

func TestFinishWithoutStartRecordsRun(t *testing.T) {
	t.Parallel()
	s := newScenario(t, hourly())
	s.ping(monitors.PingSuccess, at("2026-01-01T10:00:00Z"), durationMS(1500), rid("x"))
	require.Len(t, s.run, 1)
	r := s.run[0]
	require.Equal(t, monitors.RunSucceeded, r.Outcome)
	require.Equal(t, at("2026-01-01T09:59:58.5Z"), *r.StartedAt)
	s.ping(monitors.PingFail, at("2026-01-01T11:00:00Z"), rid("unknown"), exitCode(2))
	require.Equal(t, int64(2), s.run[1].Seq)
	require.Equal(t, 2, *s.run[1].ExitCode)
}

func TestReconfigure(t *testing.T) {
	t.Parallel()
	s := newScenario(t, &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *"}})
	s.ping(monitors.PingSuccess, at("2026-01-01T02:00:10Z"))
	// A person switches to hourly at 14:00: the 03:00 occurrence is long past,
	// so the new schedule applies from now rather than alerting at once.
	s.m.Schedule.Expr = "0 * * * *"
	tr, err := monitors.Reconfigure(s.m, at("2026-01-01T14:00:00Z"))
	require.NoError(t, err)
	require.True(t, tr.Empty())
	require.Equal(t, at("2026-01-01T15:00:00Z"), s.m.State.Expected)
}

func TestOpenRunsAreBounded(t *testing.T) {
	t.Parallel()
	m := hourly()
	m.Overlap = monitors.OverlapIgnore
	s := newScenario(t, m)
	start := at("2026-01-01T10:00:00Z")
	for i := 0; i < monitors.MaxOpenRuns+5; i++ {
		s.ping(monitors.PingStart, start.Add(time.Duration(i)*time.Second))
	}
	require.Len(t, s.m.State.Runs, monitors.MaxOpenRuns)
}

func TestApplyPingLeavesMonitorUntouchedOnBadSchedule(t *testing.T) {
	t.Parallel()
	m := &monitors.Monitor{ID: "x", Schedule: monitors.ScheduleSpec{Kind: "weekly"}}
	_, err := monitors.ApplyPing(m, &monitors.Ping{Kind: monitors.PingSuccess, At: at("2026-01-01T10:00:00Z")})
	require.Error(t, err)
	require.True(t, m.State.LastPingAt.IsZero())
}

func TestDaylightSavingOccurrences(t *testing.T) {
	t.Parallel()
	m := &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 2 * * *", TZ: "America/New_York"}}
	s := newScenario(t, m)
	// 02:30 does not exist on 2026-03-08: the job runs once, at 03:00 EDT.
	s.ping(monitors.PingSuccess, at("2026-03-07T02:30:05-05:00"))
	require.True(t, at("2026-03-08T03:00:00-04:00").Equal(s.m.State.Expected), "%s", s.m.State.Expected)
	s.tick(at("2026-03-08T03:05:00-04:00"))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.opened())
	require.Contains(t, s.log[0].Summary, "did not run at 2026-03-08 03:00 America/New_York")

	// 01:30 happens twice on 2026-11-01: the job runs once, at the first.
	m2 := &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 1 * * *", TZ: "America/New_York"}}
	s2 := newScenario(t, m2)
	s2.ping(monitors.PingSuccess, at("2026-11-01T01:30:10-04:00"))
	require.True(t, at("2026-11-02T01:30:00-05:00").Equal(s2.m.State.Expected), "no second 01:30 expected that night: %s", s2.m.State.Expected)
}

func TestScheduleValidation(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		spec  monitors.ScheduleSpec
		field string
		msg   string
	}{
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 0 30 2 *"}, "schedule.expr", "never fires"},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "61 * * * *"}, "schedule.expr", "61"},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *", TZ: "Mars/Olympus"}, "schedule.tz", `unknown time zone "Mars/Olympus"`},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "* 2 * 3 SUN#2", TZ: "America/New_York"}, "schedule.expr", "never fires in America/New_York"},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 0}, "schedule.every_seconds", "between 1"},
		{monitors.ScheduleSpec{Kind: "weekly"}, "schedule.kind", "not one of cron, interval"},
	} {
		_, err := monitors.ParseSchedule(tt.spec)
		var ve *monitors.ValidationError
		require.ErrorAs(t, err, &ve, "%+v", tt.spec)
		require.Equal(t, tt.field, ve.Field)
		require.Contains(t, ve.Message, tt.msg)
	}
	for _, ok := range []monitors.ScheduleSpec{
		{Kind: monitors.ScheduleCron, Expr: "@hourly"},
		{Kind: monitors.ScheduleCron, Expr: "*/10 * * * * *", TZ: "Europe/Berlin"},
		{Kind: monitors.ScheduleCron, Expr: "1 1 LW * *"},
		{Kind: monitors.ScheduleCron, Expr: "0 9 * * 5#3", TZ: "Asia/Tokyo"},
		{Kind: monitors.ScheduleInterval, EverySeconds: 1},
	} {
		_, err := monitors.ParseSchedule(ok)
		require.NoError(t, err, "%+v", ok)
	}
}
