package monitors_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// hangfireDefault is Hangfire's default retry policy: 10 retries whose
// longest delays add up to 17,078 s (4h44m).
func hangfireDefault() *monitors.RetryPolicy {
	return &monitors.RetryPolicy{Name: "hangfire-default", MaxRetries: 10,
		MaxDelaysSeconds: []int64{44, 74, 118, 212, 416, 814, 1514, 2648, 4372, 6866}}
}

func TestAdvise(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	cron := func(expr, tz string) monitors.ScheduleSpec {
		return monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr, TZ: tz}
	}
	for _, tt := range []struct {
		name string
		m    monitors.Monitor
		want []string // the fields, in order
		text []string // a part of each advice's text
	}{
		{name: "hangfire on an hourly job", m: monitors.Monitor{Schedule: cron("0 * * * *", ""), RetryPolicy: hangfireDefault()},
			want: []string{"retry_policy"}, text: []string{"may take up to 4h44m (retry_chain_seconds), longer than the 1h between runs of the schedule 0 * * * * (UTC)"}},
		{name: "a deadline shorter than the chain", m: monitors.Monitor{Schedule: cron("0 3 * * *", "Europe/Berlin"),
			RetryPolicy: hangfireDefault(), DeadlineSeconds: 3600},
			want: []string{"deadline_seconds"}, text: []string{"longer than the deadline of 1h"}},
		{name: "an interval shorter than the chain", m: monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 7200},
			RetryPolicy: hangfireDefault()}, want: []string{"retry_policy"}, text: []string{"longer than the 2h between runs"}},
		{name: "no retries", m: monitors.Monitor{Schedule: cron("* * * * *", ""), GraceSeconds: 30,
			RetryPolicy: &monitors.RetryPolicy{MaxRetries: 0}}},
		{name: "retries that fit", m: monitors.Monitor{Schedule: cron("*/10 * * * *", ""),
			RetryPolicy: &monitors.RetryPolicy{MaxRetries: 3, MaxDelaysSeconds: []int64{60}}}},
		{name: "grace as long as the gap", m: monitors.Monitor{Schedule: cron("0 * * * *", ""), GraceSeconds: 3600},
			want: []string{"grace_seconds"}, text: []string{"the grace of 1h is not shorter than the 1h between runs of the schedule 0 * * * * (UTC)"}},
		{name: "grace past the shortest gap of the day", m: monitors.Monitor{Schedule: cron("0 9,17 * * *", ""), GraceSeconds: 10 * 3600},
			want: []string{"grace_seconds"}, text: []string{"not shorter than the 8h between runs"}},
		{name: "grace shorter than the gap", m: monitors.Monitor{Schedule: cron("0 * * * *", ""), GraceSeconds: 3599}},
		{name: "grace on an interval", m: monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 60},
			GraceSeconds: 600}},
		{name: "early_seconds half the gap", m: monitors.Monitor{Schedule: cron("0 * * * *", ""), EarlySeconds: 1800},
			want: []string{"early_seconds"}, text: []string{"early_seconds of 30m is not less than half the 1h between runs of the schedule 0 * * * * (UTC)"}},
		{name: "early_seconds that can fire", m: monitors.Monitor{Schedule: cron("0 * * * *", ""), EarlySeconds: 1799}},
		{name: "all at once", m: monitors.Monitor{Schedule: cron("0 * * * *", ""), GraceSeconds: 7200,
			RetryPolicy: hangfireDefault(), DeadlineSeconds: 1800},
			want: []string{"retry_policy", "deadline_seconds", "grace_seconds"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := tt.m
			m.ApplyDefaults()
			var a monitors.Adviser
			got := a.Advise(&m, now)
			var fields []string
			for _, adv := range got {
				fields = append(fields, adv.Field)
				require.Equal(t, adv.Field+": "+adv.Text, adv.String())
			}
			require.Equal(t, tt.want, fields)
			for i, s := range tt.text {
				require.Contains(t, got[i].Text, s)
			}
			require.Equal(t, got, a.Advise(&m, now.Add(time.Hour)), "remembered gaps give the same advice")
		})
	}
}

// TestGraceAdviceIsTrue plays the grace_seconds advice's case through the
// state machine: on an hourly job with an hour of grace, an occurrence that
// never runs is never reported, because the next run's ping covers it.
func TestGraceAdviceIsTrue(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		grace    int64
		reported bool
	}{{3600, false}, {7200, false}, {3540, true}} {
		s := newScenario(t, &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *"},
			GraceSeconds: tt.grace})
		var a monitors.Adviser
		s.ping(monitors.PingSuccess, t0.Add(5*time.Second))
		// 01:00 never runs; 02:00 and 03:00 do, on time.
		for _, h := range []int{2, 3} {
			s.advance(t0.Add(time.Duration(h) * time.Hour))
			s.ping(monitors.PingSuccess, t0.Add(time.Duration(h)*time.Hour+5*time.Second))
		}
		s.advance(t0.Add(4 * time.Hour))
		reported := len(s.opened()) > 0
		require.Equal(t, tt.reported, reported, "grace %ds: opened %v", tt.grace, s.opened())
		require.Equal(t, !tt.reported, len(a.Advise(s.m, t0)) == 1, "advice exactly when the miss goes unreported (grace %ds)", tt.grace)
	}
}

func TestScheduleGap(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		spec monitors.ScheduleSpec
		want time.Duration
	}{
		{monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 90}, 90 * time.Second},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "*/15 * * * *", TZ: "UTC"}, 15 * time.Minute},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 9 * * 1-5", TZ: "UTC"}, 24 * time.Hour},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 9,17 * * *", TZ: "UTC"}, 8 * time.Hour},
		// The spring change in Berlin (29 March 2026) makes one day 23h.
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 3 * * *", TZ: "Europe/Berlin"}, 23 * time.Hour},
		// Each scheduler's own reading: robfig skips 02:30 on the spring day
		// in New York, so its shortest gap is a day, not cronie's 23.5h.
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 2 * * *", TZ: "America/New_York"}, 23*time.Hour + 30*time.Minute},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 2 * * *", TZ: "America/New_York",
			Dialect: monitors.DialectRobfig}, 24 * time.Hour},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 0 12 ? * 2#1", TZ: "UTC",
			Dialect: monitors.DialectQuartz}, 28 * 24 * time.Hour},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "@every 2h", Dialect: monitors.DialectRobfig}, 2 * time.Hour},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "Mon..Fri 02:30", TZ: "UTC"}, 24 * time.Hour},
	} {
		got, ok := monitors.ScheduleGap(tt.spec, from)
		require.True(t, ok, tt.spec.Describe())
		require.Equal(t, tt.want, got, tt.spec.Describe())
	}
	_, ok := monitors.ScheduleGap(monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "nope"}, from)
	require.False(t, ok)
}

// BenchmarkAdvise measures what the advice costs the answer to a ping:
// Advise with the schedule's gap remembered (every ping but a process's
// first of each schedule), and the first sight of a schedule, against
// ApplyPing, the state machine's work on every ping.
func BenchmarkAdvise(b *testing.B) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	mon := func(spec monitors.ScheduleSpec, grace int64, p *monitors.RetryPolicy) *monitors.Monitor {
		m := &monitors.Monitor{ID: "m1", Name: "job", Schedule: spec, GraceSeconds: grace, RetryPolicy: p}
		m.ApplyDefaults()
		return m
	}
	hourly := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *", TZ: "Europe/Berlin"}
	robfig := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 2 * * *", TZ: "America/New_York", Dialect: monitors.DialectRobfig}
	b.Run("baseline/ApplyPing", func(b *testing.B) {
		m := mon(hourly, 300, nil)
		at := now
		for b.Loop() {
			at = at.Add(time.Hour)
			if _, err := monitors.ApplyPing(m, &monitors.Ping{Kind: monitors.PingSuccess, At: at}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		m    *monitors.Monitor
	}{
		{"remembered/no-advice", mon(hourly, 300, nil)},
		{"remembered/two-advice", mon(hourly, 3600, hangfireDefault())},
	} {
		b.Run(c.name, func(b *testing.B) {
			var a monitors.Adviser
			a.Advise(c.m, now)
			for b.Loop() {
				_ = monitors.AdviceStrings(a.Advise(c.m, now))
			}
		})
	}
	for _, c := range []struct {
		name string
		spec monitors.ScheduleSpec
	}{{"first-sight/cronie", hourly}, {"first-sight/robfig", robfig}} {
		b.Run(c.name, func(b *testing.B) {
			m := mon(c.spec, 300, nil)
			for b.Loop() {
				var a monitors.Adviser
				a.Advise(m, now)
			}
		})
	}
}
