package monitors_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// step is one ping of a run-rules table, at a time of day on 2026-01-0d.
type step struct {
	kind monitors.PingKind
	at   string // "2T01:00:00": day 2, 01:00 UTC
	opts []pingOpt
}

func day(s string) time.Time { return at("2026-01-0" + s + "Z") }

func st(kind monitors.PingKind, when string, opts ...pingOpt) step {
	return step{kind: kind, at: when, opts: opts}
}

// run is a run with a start and a success, its rid its start time.
func run(start string, took time.Duration, opts ...pingOpt) []step {
	r := rid(start)
	end := day(start).Add(took).Format("2T15:04:05")
	return []step{st(monitors.PingStart, start, append(opts, r)...), st(monitors.PingSuccess, end, append(opts, r)...)}
}

type ruleCase struct {
	name     string
	steps    [][]step
	until    string // advance the clock to here at the end ("": no further)
	opened   []monitors.IncidentKind
	resolved []monitors.IncidentKind
	updated  int // updates of the kinds opened
}

// runTable plays each case on a fresh monitor made by newMonitor, applying
// every deadline before each ping, and checks the incidents of the kinds
// the rules decide, and of missed.
func runTable(t *testing.T, newMonitor func() *monitors.Monitor, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newScenario(t, newMonitor())
			for _, p := range slices.Concat(tc.steps...) {
				s.advance(day(p.at))
				s.ping(p.kind, day(p.at), p.opts...)
			}
			if tc.until != "" {
				s.advance(day(tc.until))
			}
			require.Equal(t, tc.opened, s.opened(), "opened")
			require.Equal(t, tc.resolved, s.resolved(), "resolved")
			n := 0
			for _, c := range s.log {
				if c.Op == monitors.IncidentUpdate {
					n++
				}
			}
			require.Equal(t, tc.updated, n, "updates")
		})
	}
}

func kinds(k ...monitors.IncidentKind) []monitors.IncidentKind { return k }

const (
	tooFast  = monitors.IncidentTooFast
	early    = monitors.IncidentEarly
	tooOften = monitors.IncidentTooOften
	missed   = monitors.IncidentMissed
)

// TestTooFast: min_runtime_seconds judges every success whose duration is
// known, from its start ping or duration_ms.
func TestTooFast(t *testing.T) {
	t.Parallel()
	backup := func() *monitors.Monitor {
		m := hourly()
		m.Name, m.MinRuntimeSeconds, m.MaxRuntimeSeconds = "backup", 60, 3600
		return m
	}
	runTable(t, backup, []ruleCase{
		{name: "a 2-second backup is too fast", steps: [][]step{run("1T10:00:00", 2*time.Second)}, opened: kinds(tooFast)},
		{name: "five minutes is not", steps: [][]step{run("1T10:00:00", 5*time.Minute)}},
		{name: "exactly the min runtime is not", steps: [][]step{run("1T10:00:00", time.Minute)}},
		{name: "duration_ms without a start ping is judged",
			steps: [][]step{{st(monitors.PingSuccess, "1T10:00:02", durationMS(2000))}}, opened: kinds(tooFast)},
		{name: "duration_ms overrides the start ping's measure",
			steps: [][]step{{st(monitors.PingStart, "1T10:00:00", rid("a")), st(monitors.PingSuccess, "1T10:05:00", rid("a"), durationMS(1500))}}, opened: kinds(tooFast)},
		{name: "a success with no duration is not judged", steps: [][]step{{st(monitors.PingSuccess, "1T10:00:00")}}},
		{name: "a failure is not too fast",
			steps: [][]step{{st(monitors.PingStart, "1T10:00:00"), st(monitors.PingFail, "1T10:00:02")}}, opened: kinds(monitors.IncidentFailed)},
		{name: "the next run long enough resolves it",
			steps:  [][]step{run("1T10:00:00", 2*time.Second), run("1T11:00:00", 10*time.Minute)},
			opened: kinds(tooFast), resolved: kinds(tooFast)},
		{name: "a success with no duration does not resolve it",
			steps:  [][]step{run("1T10:00:00", 2*time.Second), {st(monitors.PingSuccess, "1T11:00:00")}},
			opened: kinds(tooFast)},
		{name: "too fast again updates the open incident",
			steps:  [][]step{run("1T10:00:00", 2*time.Second), run("1T11:00:00", 3*time.Second)},
			opened: kinds(tooFast), updated: 1},
	})
	runTable(t, hourly, []ruleCase{
		{name: "off by default", steps: [][]step{run("1T10:00:00", 2*time.Second)}},
	})

	t.Run("Summary", func(t *testing.T) {
		t.Parallel()
		s := newScenario(t, backup())
		s.ping(monitors.PingStart, day("1T10:00:00"), rid("b1"))
		s.ping(monitors.PingSuccess, day("1T10:00:02"), rid("b1"))
		require.Equal(t, `backup: run "b1" succeeded at 2026-01-01 10:00:02 UTC after only 2s, less than its min runtime of 1m`, s.log[0].Summary)
		require.Equal(t, int64(1), s.log[0].RunSeq)
		require.Equal(t, monitors.StatusDown, s.m.State.Status)
		tr, err := monitors.Reconfigure(func() *monitors.Monitor { s.m.MinRuntimeSeconds = 0; return s.m }(), day("1T10:01:00"))
		require.NoError(t, err)
		require.Equal(t, monitors.IncidentResolve, tr.Incidents[0].Op, "removing the min runtime resolves it")
	})
}

// TestEarly: early_seconds on a daily 02:00 job.
func TestEarly(t *testing.T) {
	t.Parallel()
	daily := func() *monitors.Monitor {
		return &monitors.Monitor{Name: "report", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *"},
			EarlySeconds: 300, MaxRuntimeSeconds: 3600}
	}
	first := run("1T02:00:00", time.Minute)
	runTable(t, daily, []ruleCase{
		{name: "on time", steps: [][]step{first, run("2T02:00:03", time.Minute)}, until: "3T01:00:00"},
		{name: "an hour early: early, and the occurrence is covered (no missed)",
			steps: [][]step{first, run("2T01:00:00", 5*time.Minute)}, until: "2T12:00:00", opened: kinds(early)},
		{name: "within early_seconds: on time, and covered",
			steps: [][]step{first, run("2T01:56:00", time.Minute)}, until: "2T12:00:00"},
		{name: "the next run on time resolves it",
			steps:  [][]step{first, run("2T01:00:00", time.Minute), run("3T02:00:00", time.Minute)},
			opened: kinds(early), resolved: kinds(early)},
		{name: "early every day updates the one incident",
			steps:  [][]step{first, run("2T01:00:00", time.Minute), run("3T01:00:00", time.Minute)},
			until:  "3T12:00:00",
			opened: kinds(early), updated: 1},
		{name: "a run soon after an occurrence is not early for the next",
			steps: [][]step{first, run("1T02:30:00", time.Minute)}},
		{name: "scheduled_at names the occurrence",
			steps:  [][]step{first, run("2T01:50:00", time.Minute, scheduledAt(day("2T02:00:00")))},
			opened: kinds(early)},
		{name: "a retry is never early",
			steps: [][]step{{st(monitors.PingStart, "1T02:00:00", rid("a"), attempt(1)), st(monitors.PingFail, "1T02:01:00", rid("a"), attempt(1), retryAt(day("1T22:00:00")))},
				run("1T22:00:00", time.Minute, attempt(2))}},
		{name: "a retry without attempt numbers is never early",
			steps: [][]step{{st(monitors.PingStart, "1T02:00:00", rid("a")), st(monitors.PingFail, "1T02:01:00", rid("a"), retryAt(day("1T22:00:00")))},
				run("1T22:00:00", time.Minute)}},
		{name: "a late run of a missed occurrence is late, not early for the next",
			steps:  [][]step{first, run("2T20:00:00", time.Minute)},
			opened: kinds(missed), resolved: kinds(missed)},
		{name: "a run reported by its end alone is judged by its start (end - duration_ms)",
			steps:  [][]step{first, {st(monitors.PingSuccess, "2T01:20:00", durationMS(30*60*1000))}},
			until:  "2T12:00:00",
			opened: kinds(early)},
		{name: "a run reported by its end alone, without duration_ms, is judged by its end",
			steps: [][]step{first, {st(monitors.PingSuccess, "2T01:58:00")}}, until: "2T12:00:00"},
	})
	runTable(t, func() *monitors.Monitor {
		return &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *"}}
	}, []ruleCase{
		{name: "off by default: an hour early is just not this occurrence's run",
			steps: [][]step{first, run("2T01:00:00", time.Minute)}, until: "2T12:00:00",
			opened: kinds(missed), resolved: nil},
	})
	runTable(t, func() *monitors.Monitor {
		return &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "*-*-* 02:00:00"}, EarlySeconds: 300}
	}, []ruleCase{
		{name: "oncalendar", steps: [][]step{first, run("2T01:00:00", time.Minute)}, until: "2T12:00:00", opened: kinds(early)},
	})

	t.Run("Summary", func(t *testing.T) {
		t.Parallel()
		s := newScenario(t, daily())
		s.ping(monitors.PingSuccess, day("1T02:00:00"))
		s.ping(monitors.PingStart, day("2T01:00:00"))
		require.Equal(t, "report: a run started at 2026-01-02 01:00 UTC, 1h before its occurrence of 2026-01-02 02:00 UTC (early_seconds: 5m)", s.log[0].Summary)
		require.Equal(t, day("3T02:00:00"), s.m.State.Expected, "the early run covers its occurrence")
		s.ping(monitors.PingSuccess, day("2T01:30:00"))
		require.Equal(t, day("3T02:00:00"), s.m.State.Expected, "and its end does not take that back")
	})

	t.Run("RefusedOnIntervals", func(t *testing.T) {
		t.Parallel()
		for _, spec := range []monitors.ScheduleSpec{
			{Kind: monitors.ScheduleInterval, EverySeconds: 3600},
			{Kind: monitors.ScheduleCron, Expr: "@every 1h", Dialect: monitors.DialectRobfig},
		} {
			m := &monitors.Monitor{Name: "x", Schedule: spec, EarlySeconds: 60}
			m.ApplyDefaults()
			var ve *monitors.ValidationError
			require.ErrorAs(t, m.Validate(), &ve, "%+v", spec)
			require.Equal(t, "early_seconds", ve.Field)
		}
	})
}

// TestTooOften: more successes than occurrences (cron), or two closer
// than half the interval; retries never count.
func TestTooOften(t *testing.T) {
	t.Parallel()
	hourlyOften := func() *monitors.Monitor {
		m := hourlyNoOverlap()
		m.Name, m.TooOften = "sync", monitors.TooOftenAlert
		return m
	}
	h := func(s string) time.Time { return day("1T" + s) }
	hangfire := func(occ string, last int, end storetest.ChainEnd, keyed bool) []step {
		var out []step
		for _, p := range storetest.HangfireChain(h(occ), last, end, keyed) {
			p := p
			out = append(out, step{kind: p.Kind, at: p.At.Format("2T15:04:05"), opts: []pingOpt{func(q *monitors.Ping) {
				q.RID, q.Attempt, q.RetryAt, q.ScheduledAt = p.RID, p.Attempt, p.RetryAt, p.ScheduledAt
			}}})
		}
		return out
	}
	unnumbered := func(occ string) []step {
		// Fails twice announcing each retry, with no attempt numbers.
		return []step{st(monitors.PingStart, "1T"+occ), st(monitors.PingFail, h(occ).Add(time.Minute).Format("2T15:04:05"), retryAt(h(occ).Add(5*time.Minute))),
			st(monitors.PingStart, h(occ).Add(5*time.Minute).Format("2T15:04:05")), st(monitors.PingFail, h(occ).Add(6*time.Minute).Format("2T15:04:05"), retryAt(h(occ).Add(10*time.Minute))),
			st(monitors.PingStart, h(occ).Add(10*time.Minute).Format("2T15:04:05")), st(monitors.PingSuccess, h(occ).Add(11*time.Minute).Format("2T15:04:05"))}
	}
	runTable(t, hourlyOften, []ruleCase{
		{name: "one run an occurrence", steps: [][]step{run("1T10:00:00", time.Minute), run("1T11:00:10", time.Minute), run("1T12:00:00", time.Minute)}},
		{name: "a second success in one hour",
			steps: [][]step{run("1T10:00:00", time.Minute), run("1T10:30:00", time.Minute)}, opened: kinds(tooOften)},
		{name: "Hangfire retries of one occurrence, keyed by scheduled_at",
			steps: [][]step{run("1T09:00:00", time.Minute), hangfire("10:00:00", 6, storetest.ChainSucceeds, true), run("1T11:00:00", time.Minute, scheduledAt(h("11:00:00")))}},
		{name: "Hangfire retries of one occurrence, with attempt numbers only",
			steps: [][]step{run("1T09:00:00", time.Minute), hangfire("10:00:00", 6, storetest.ChainSucceeds, false), run("1T11:00:00", time.Minute)}},
		{name: "retries that announce retry_at without attempt numbers",
			steps: [][]step{run("1T09:00:00", time.Minute), unnumbered("10:00:00"), run("1T11:00:00", time.Minute)}},
		{name: "a rerun after a final failure",
			steps:  [][]step{run("1T09:00:00", time.Minute), {st(monitors.PingFail, "1T10:00:00"), st(monitors.PingSuccess, "1T10:10:00")}},
			opened: kinds(monitors.IncidentFailed), resolved: kinds(monitors.IncidentFailed)},
		{name: "one occurrence named twice",
			steps:  [][]step{{st(monitors.PingSuccess, "1T10:00:00", scheduledAt(h("10:00:00"))), st(monitors.PingSuccess, "1T10:20:00", scheduledAt(h("10:00:00")))}},
			opened: kinds(tooOften)},
		{name: "resolved at the first run after an occurrence that ran once",
			steps: [][]step{run("1T10:00:00", time.Minute), run("1T10:30:00", time.Minute), run("1T11:00:00", time.Minute),
				run("1T12:00:00", time.Minute)},
			opened: kinds(tooOften), resolved: kinds(tooOften)},
		{name: "every ten minutes instead of hourly: one incident, no updates",
			steps: func() [][]step {
				var out [][]step
				for m := 0; m < 120; m += 10 {
					out = append(out, run(h("10:00:00").Add(time.Duration(m)*time.Minute).Format("2T15:04:05"), time.Minute))
				}
				return out
			}(),
			opened: kinds(tooOften)},
	})
	runTable(t, func() *monitors.Monitor {
		m := hourlyOften()
		m.GraceSeconds = 4 * 3600 // the scheduler was down for three hours
		return m
	}, []ruleCase{
		{name: "catch-up runs that name their occurrences",
			steps: [][]step{run("1T09:00:00", time.Minute), {
				st(monitors.PingSuccess, "1T12:00:00", scheduledAt(h("10:00:00"))),
				st(monitors.PingSuccess, "1T12:00:01", scheduledAt(h("11:00:00"))),
				st(monitors.PingSuccess, "1T12:00:02", scheduledAt(h("12:00:00")))}}},
		{name: "catch-up runs that do not name them look like too many",
			steps: [][]step{run("1T09:00:00", time.Minute), {
				st(monitors.PingSuccess, "1T12:00:00"), st(monitors.PingSuccess, "1T12:00:01"), st(monitors.PingSuccess, "1T12:00:02")}},
			opened: kinds(tooOften)},
	})
	runTable(t, hourlyNoOverlap, []ruleCase{
		{name: "off by default", steps: [][]step{run("1T10:00:00", time.Minute), run("1T10:30:00", time.Minute)}},
	})
	runTable(t, func() *monitors.Monitor {
		m := hourlyOften()
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *"}
		m.EarlySeconds = 300
		return m
	}, []ruleCase{
		{name: "an early run is reported as early only",
			steps:  [][]step{run("1T02:00:00", time.Minute), run("1T20:00:00", time.Minute), run("2T02:00:00", time.Minute)},
			opened: kinds(early), resolved: kinds(early)},
		{name: "an extra run nearer the occurrence before is too often",
			steps:  [][]step{run("1T02:00:00", time.Minute), run("1T08:00:00", time.Minute)},
			opened: kinds(tooOften)},
	})
	every := func() *monitors.Monitor {
		return &monitors.Monitor{Name: "loop", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600},
			TooOften: monitors.TooOftenAlert, MaxRuntimeSeconds: 1800}
	}
	runTable(t, every, []ruleCase{
		{name: "interval: an hour apart", steps: [][]step{run("1T10:00:00", time.Minute), run("1T11:00:00", time.Minute), run("1T12:05:00", 20*time.Minute)}},
		{name: "interval: 20 minutes apart, then an hour",
			steps:  [][]step{run("1T10:00:00", time.Minute), run("1T10:20:00", time.Minute), run("1T11:20:00", time.Minute)},
			opened: kinds(tooOften), resolved: kinds(tooOften)},
		{name: "interval: measured between starts, not ends",
			steps: [][]step{run("1T10:00:00", 25*time.Minute), run("1T11:00:00", time.Minute)}},
		{name: "interval: a retry two minutes after a failure",
			steps: [][]step{run("1T10:00:00", time.Minute), {st(monitors.PingStart, "1T11:00:00", attempt(1)), st(monitors.PingFail, "1T11:01:00", attempt(1), retryAt(h("11:03:00")))},
				run("1T11:03:00", time.Minute, attempt(2))}},
	})

	t.Run("Summary", func(t *testing.T) {
		t.Parallel()
		s := newScenario(t, hourlyOften())
		s.ping(monitors.PingSuccess, h("10:00:00"))
		s.ping(monitors.PingSuccess, h("10:30:00"))
		require.Equal(t, "sync: a run started at 2026-01-01 10:30 UTC succeeded, run 2 for its occurrence of 2026-01-01 10:00 UTC; too_often allows one success an occurrence, besides retries", s.log[0].Summary)
		s.m.TooOften = monitors.TooOftenIgnore
		tr, err := monitors.Reconfigure(s.m, h("10:31:00"))
		require.NoError(t, err)
		require.Len(t, tr.Incidents, 1)
		require.Equal(t, monitors.IncidentResolve, tr.Incidents[0].Op, "turning it off resolves it")
		require.Nil(t, s.m.State.Ran, "and forgets the runs")
	})
}
