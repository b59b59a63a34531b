package monitors_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"
	"github.com/vigilhq/vigil/monitors/cron"

	"github.com/vigilhq/vigil/monitors"
)

// dstZones are the zones of the no-false-alarm tests: changes by an hour
// in both hemispheres, by half an hour (Lord Howe), at 02:45 (Chatham), at
// midnight (Santiago, Havana), and none (Kolkata).
var dstZones = []string{"America/New_York", "Europe/London", "Europe/Berlin", "Australia/Sydney",
	"Australia/Lord_Howe", "Pacific/Chatham", "America/Santiago", "America/Havana", "Asia/Kolkata"}

// zoneTransitions returns the instants loc changes its offset in 2026, or,
// for a zone without changes, one instant in March.
func zoneTransitions(t *testing.T, loc *time.Location) []time.Time {
	t.Helper()
	var out []time.Time
	for at := time.Date(2026, 1, 1, 0, 0, 0, 0, loc); ; {
		_, end := at.ZoneBounds()
		if end.IsZero() || end.Year() != 2026 {
			break
		}
		out = append(out, end)
		at = end
	}
	if len(out) == 0 {
		out = append(out, time.Date(2026, 3, 8, 2, 0, 0, 0, loc))
	}
	return out
}

// around keeps the fire times from eight before tr to eight after it.
func around(fires []time.Time, tr time.Time) []time.Time {
	i := 0
	for i < len(fires) && fires[i].Before(tr) {
		i++
	}
	return fires[max(0, i-8):min(len(fires), i+8)]
}

// faithfulJob runs a monitor of spec through fires, the instants its real
// scheduler runs the job, with a job that pings start one second after each
// fire and success two seconds later, and the evaluator applying every
// deadline on time. It fails the test if an incident opens, or if the
// monitor is late or down at an instant when the scheduler had nothing
// due: after a run's success and before the next fire.
func faithfulJob(t *testing.T, spec monitors.ScheduleSpec, fires []time.Time) {
	t.Helper()
	require.NotEmpty(t, fires, "%+v", spec)
	s := newScenario(t, &monitors.Monitor{Schedule: spec})
	for i, f := range fires {
		s.advance(f.Add(time.Second))
		s.ping(monitors.PingStart, f.Add(time.Second), rid(fmt.Sprint(i)))
		s.advance(f.Add(3 * time.Second))
		s.ping(monitors.PingSuccess, f.Add(3*time.Second), rid(fmt.Sprint(i)))
		require.Empty(t, s.opened(), "%+v: incidents by the run at %s", spec, f)
		if i+1 == len(fires) {
			break
		}
		g := fires[i+1]
		require.True(t, s.m.State.Expected.Equal(g), "%+v: after the run at %s the monitor expects %s, the scheduler fires at %s",
			spec, f, s.m.State.Expected, g)
		for _, at := range []time.Time{f.Add(4 * time.Second), f.Add(g.Sub(f) / 2), g.Add(-time.Second)} {
			if !at.After(f.Add(3 * time.Second)) {
				continue
			}
			s.advance(at)
			st := s.status(at)
			require.True(t, st == monitors.StatusUp, "%+v: %s at %s, with nothing due before %s", spec, st, at, g)
		}
	}
}

// absentJob runs the job faithfully until the last fire before the
// transition at tr, then not at all: the missed incident must open at the
// next fire plus grace, and not before.
func absentJob(t *testing.T, spec monitors.ScheduleSpec, fires []time.Time, tr time.Time) {
	t.Helper()
	j := 0
	for j+1 < len(fires) && fires[j+1].Before(tr) {
		j++
	}
	if j+1 >= len(fires) {
		return
	}
	s := newScenario(t, &monitors.Monitor{Schedule: spec})
	for i, f := range fires[:j+1] {
		s.advance(f.Add(time.Second))
		s.ping(monitors.PingSuccess, f.Add(time.Second), rid(fmt.Sprint(i)))
	}
	due := fires[j+1].Add(s.m.Grace())
	s.advance(due)
	require.Empty(t, s.opened(), "%+v: an incident before %s", spec, due)
	require.NotEqual(t, monitors.StatusDown, s.status(due.Add(-time.Second)))
	s.advance(due.Add(time.Second))
	require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.opened(), "%+v: no missed incident for %s", spec, fires[j+1])
	require.True(t, s.log[0].At.Equal(due), "%+v: missed at %s, want %s", spec, s.log[0].At, due)
}

// TestRobfigNoFalseAlarm drives the state machine through every 2026
// transition of the nine zones with jobs whose fire times robfig/cron
// itself computes, in-process, as a running cron.Cron does: each fire is
// Schedule.Next of the one before.
func TestRobfigNoFalseAlarm(t *testing.T) {
	t.Parallel()
	parser := robfig.NewParser(robfig.SecondOptional | robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month |
		robfig.Dow | robfig.Descriptor)
	exprs := []string{"30 2 * * *", "0 2 * * *", "30 1 * * *", "45 1 * * *", "0 3 * * *", "0 0 * * *", "30 0 * * *",
		"5 2 * * 0", "0 * * * *", "*/15 * * * *", "0 30 2 * * *", "0 0 2 * * *", "15 2,14 * * *", "0 */2 * * *"}
	for _, zone := range dstZones {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		for _, tr := range zoneTransitions(t, loc) {
			for _, expr := range append(exprs, "CRON_TZ="+zone+" 0 0 2 * * *") {
				sched, err := parser.Parse(expr)
				require.NoError(t, err)
				var fires []time.Time
				// As cron.New(cron.WithLocation(loc)) runs it, started ten days
				// before.
				for f := sched.Next(tr.Add(-10 * 24 * time.Hour).In(loc)); f.Before(tr.Add(9 * 24 * time.Hour)); f = sched.Next(f) {
					fires = append(fires, f)
				}
				fires = around(fires, tr)
				spec := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr, TZ: zone, Dialect: monitors.DialectRobfig}
				faithfulJob(t, spec, fires)
				absentJob(t, spec, fires, tr)
			}
		}
	}
}

// TestQuartzNoFalseAlarm is TestRobfigNoFalseAlarm with the fire times Java
// Quartz 2.3.2 computed around every 2026 transition of the nine zones
// (cron/quartz/testdata/vectors.json).
func TestQuartzNoFalseAlarm(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("cron/quartz/testdata/vectors.json")
	require.NoError(t, err)
	var v struct {
		Series []struct {
			Expr, TZ, From string
			Next           []string
		}
	}
	require.NoError(t, json.Unmarshal(b, &v))
	zones := map[string]bool{}
	for _, z := range dstZones {
		zones[z] = true
	}
	seen := map[string]bool{}
	for _, s := range v.Series {
		from := mustTime(s.From)
		if !zones[s.TZ] || from.Year() != 2026 || len(s.Next) < 2 {
			continue
		}
		seen[s.TZ] = true
		fires := make([]time.Time, len(s.Next))
		for i, f := range s.Next {
			fires[i] = mustTime(f)
		}
		spec := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: s.Expr, TZ: s.TZ, Dialect: monitors.DialectQuartz}
		tr := from.Add(36 * time.Hour) // the series run from 36 hours before a transition
		fires = around(fires, tr)
		faithfulJob(t, spec, fires)
		absentJob(t, spec, fires, tr)
	}
	require.Len(t, seen, len(dstZones), "vectors for every zone")
}

// TestCronieNoFalseAlarm is the same for the cronie dialect. cronie cannot
// run in-process, so its fire times come from package cron, which follows
// cronie's documented rule and agrees with cronsim's vectors.
func TestCronieNoFalseAlarm(t *testing.T) {
	t.Parallel()
	exprs := []string{"30 2 * * *", "0 2 * * *", "30 1 * * *", "0 0 * * *", "5 2 * * 0", "0 * * * *", "*/15 * * * *",
		"0 30 2 * * *"}
	for _, zone := range dstZones {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		for _, tr := range zoneTransitions(t, loc) {
			for _, expr := range exprs {
				e, err := cron.Parse(expr)
				require.NoError(t, err)
				var fires []time.Time
				for f := e.Next(tr.Add(-10*24*time.Hour), loc); f.Before(tr.Add(9 * 24 * time.Hour)); f = e.Next(f, loc) {
					fires = append(fires, f)
				}
				fires = around(fires, tr)
				spec := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr, TZ: zone}
				faithfulJob(t, spec, fires)
				absentJob(t, spec, fires, tr)
			}
		}
	}
}

// TestOnCalendarNoFalseAlarm is TestRobfigNoFalseAlarm for systemd
// timers, with the elapses systemd 252 itself chained through every 2026
// transition of the nine zones (and UTC), for a timer started well before
// each (oncalendar/testdata/chains252.jsonl, written by
// oncalendar/gen_vectors.go from systemd-analyze calendar).
func TestOnCalendarNoFalseAlarm(t *testing.T) {
	t.Parallel()
	f, err := os.Open("oncalendar/testdata/chains252.jsonl")
	require.NoError(t, err)
	defer f.Close()
	zones := map[string]bool{}
	for _, z := range dstZones {
		zones[z] = true
	}
	seen := map[string]bool{}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c struct {
			TZ, Expr string
			Tr       int64
			Next     []int64
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		if len(c.Next) < 2 {
			continue
		}
		seen[c.TZ] = true
		fires := make([]time.Time, len(c.Next))
		for i, u := range c.Next {
			fires[i] = time.Unix(u, 0)
		}
		tr := time.Unix(c.Tr, 0)
		spec := monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: c.Expr, TZ: c.TZ}
		faithfulJob(t, spec, around(fires, tr))
		absentJob(t, spec, around(fires, tr), tr)
		n++
	}
	require.NoError(t, sc.Err())
	for z := range zones {
		require.True(t, seen[z], "chains for %s", z)
	}
	t.Logf("%d chains", n)
}

// TestOnCalendarRepeatedHour pins the false alarm TestOnCalendarNoFalseAlarm
// found: *-*-* 01:59:59 in America/New_York elapses at 01:59:59 EDT on
// 2026-11-01, and systemd's next elapse from there is 2026-11-02 (it
// elapses each wall time once), but systemd's search from just after the
// run, an hour of wall time back in EST, names 01:59:59 EST that day. A
// monitor must not expect it. A timer that triggers late (AccuracySec=,
// a minute by default) computes its next elapse from then and may run at
// 01:59:59 EST too: that extra run opens nothing either.
func TestOnCalendarRepeatedHour(t *testing.T) {
	t.Parallel()
	spec := monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "*-*-* 01:59:59", TZ: "America/New_York"}
	edt, est := mustTime("2026-11-01T01:59:59-04:00"), mustTime("2026-11-01T01:59:59-05:00")
	next := mustTime("2026-11-02T01:59:59-05:00")
	for _, extra := range []bool{false, true} {
		s := newScenario(t, &monitors.Monitor{Schedule: spec})
		fires := []time.Time{mustTime("2026-10-31T01:59:59-04:00"), edt}
		if extra {
			fires = append(fires, est)
		}
		fires = append(fires, next)
		for i, f := range fires {
			s.advance(f.Add(time.Second))
			s.ping(monitors.PingStart, f.Add(time.Second), rid(fmt.Sprint(i)))
			s.advance(f.Add(3 * time.Second))
			s.ping(monitors.PingSuccess, f.Add(3*time.Second), rid(fmt.Sprint(i)))
			require.True(t, s.m.State.Expected.After(f), "extra %v: expects %s after the run at %s", extra, s.m.State.Expected, f)
			if f.Equal(edt) || f.Equal(est) {
				require.True(t, s.m.State.Expected.Equal(next), "extra %v: after %s the monitor expects %s, systemd elapses at %s",
					extra, f, s.m.State.Expected, next)
			}
		}
		require.Empty(t, s.opened(), "extra %v", extra)
	}
	// Between the runs, at the EST reading and after it, nothing is due.
	s := newScenario(t, &monitors.Monitor{Schedule: spec})
	for i, f := range []time.Time{mustTime("2026-10-31T01:59:59-04:00"), edt} {
		s.advance(f.Add(time.Second))
		s.ping(monitors.PingSuccess, f.Add(time.Second), rid(fmt.Sprint(i)))
	}
	for _, at := range []time.Time{est, est.Add(s.m.Grace() + time.Second), next.Add(-time.Second)} {
		s.advance(at)
		require.Equal(t, monitors.StatusUp, s.status(at), "at %s", at)
	}
	require.Empty(t, s.opened())
}
