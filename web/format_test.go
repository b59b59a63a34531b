package web

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers/kinds"
)

func TestParseFormDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"": 0, "90": 90, "90s": 90, "5m": 300, "1h30m": 5400, "2d": 172800, "1.5h": 5400, " 1h 5m ": 3900, "1D": 86400,
	} {
		got, err := parseFormDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"soon", "5x", "m", "-5", "1h-5m", "4000d"} {
		_, err := parseFormDuration(in)
		require.Error(t, err, in)
	}
	for _, secs := range []int64{1, 59, 60, 90, 3600, 5400, 86400, 90061} {
		back, err := parseFormDuration(formDuration(secs))
		require.NoError(t, err)
		require.Equal(t, secs, back, "formDuration(%d) = %q reads back", secs, formDuration(secs))
	}
}

func TestRelative(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		0: "just now", time.Second: "just now", 12 * time.Minute: "in 12 min", -3 * time.Minute: "3 min ago",
		45 * time.Second: "in 45 s", 2*time.Hour + 5*time.Minute: "in 2 h 5 min", -30 * time.Hour: "30 h ago",
		-3 * 24 * time.Hour: "3 days ago", 24 * 90 * time.Hour: "in 3 months",
	} {
		require.Equal(t, want, relative(now.Add(d), now), d)
	}
}

// TestRelativeSpan: relativeSpan's instant is after now, the text is the
// same at every instant from now to just before it, and different at it,
// for distances of every range of relative, in the future and the past,
// on and off the units' multiples. A span too long would let the list
// answer 304 over a changed relative time; one too short costs a draw.
func TestRelativeSpan(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var ds []time.Duration
	for _, base := range []time.Duration{0, time.Second, 2 * time.Second, 59 * time.Second, time.Minute, 61 * time.Minute,
		time.Hour, 10 * time.Hour, 47 * time.Hour, 48 * time.Hour, 59 * 24 * time.Hour, 60 * 24 * time.Hour, 400 * 24 * time.Hour} {
		for _, off := range []time.Duration{0, time.Nanosecond, 300 * time.Millisecond, 999 * time.Millisecond, 17*time.Second + 5} {
			ds = append(ds, base+off, -(base + off), base-off, -(base - off))
		}
	}
	for _, d := range ds {
		at := now.Add(d)
		text, until := relativeSpan(at, now)
		require.Equal(t, relative(at, now), text)
		require.True(t, until.After(now), "%s: until %s is after now", d, until)
		span := until.Sub(now)
		for _, x := range []time.Duration{0, time.Nanosecond, span / 3, span / 2, span - time.Millisecond, span - time.Nanosecond} {
			if x < 0 || x >= span {
				continue
			}
			require.Equal(t, text, relative(at, now.Add(x)), "%s: the same %s later (span %s)", d, x, span)
		}
		require.NotEqual(t, text, relative(at, until), "%s: different at until (%s later)", d, span)
	}
}

func TestPlainDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		3 * time.Second: "3 seconds", time.Minute: "1 minute", 90 * time.Minute: "1 hour 30 minutes",
		26*time.Hour + time.Minute: "1 day 2 hours", 0: "0 seconds",
	} {
		require.Equal(t, want, plainDuration(d))
	}
}

func TestScheduleWords(t *testing.T) {
	t.Parallel()
	w, z := scheduleWords(monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 2 * * *", TZ: "Europe/Berlin"})
	require.Equal(t, "at 02:30 every day", w)
	require.Equal(t, "Europe/Berlin", z)
	w, z = scheduleWords(monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "@hourly"})
	require.Equal(t, "every hour", w)
	require.Equal(t, "UTC", z)
	w, z = scheduleWords(monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 900})
	require.Equal(t, "every 15 minutes, counted from the last ping", w)
	require.Empty(t, z)
	w, z = scheduleWords(monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "Mon..Fri 02:30", TZ: "Europe/Berlin"})
	require.Equal(t, "at 02:30 on Monday to Friday", w)
	require.Equal(t, "Europe/Berlin", z)
	w, z = scheduleWords(monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "*-*~01 06:00 Asia/Kolkata", TZ: "Europe/Berlin"})
	require.Equal(t, "at 06:00 on the last day of the month", w)
	require.Equal(t, "Asia/Kolkata", z, "the zone in the expression wins")
}

func TestSparkline(t *testing.T) {
	t.Parallel()
	require.Contains(t, string(sparkline(nil)), "no runs yet")
	ms := func(v int64) *int64 { return &v }
	runs := []monitors.RunBrief{ // newest first
		{Outcome: monitors.RunSucceeded, DurationMS: ms(3000)},
		{Outcome: monitors.RunFailed, DurationMS: ms(9000)},
		{Outcome: ""},
		{Outcome: monitors.RunSucceeded, DurationMS: ms(1000)},
	}
	svg := string(sparkline(runs))
	require.Contains(t, svg, `role="img" aria-label="Last 3 runs: median 3.0 s, longest 9.0 s, 1 failed"`)
	require.Equal(t, 1, strings.Count(svg, `class="spark-fail"`))
	require.Contains(t, svg, "<polyline")
}

// TestChannelKindsMatchRegistry keeps the channel forms in step with
// notifiers/kinds: every kind, in its order, with exactly its keys.
func TestChannelKindsMatchRegistry(t *testing.T) {
	t.Parallel()
	require.Equal(t, kinds.Names(), func() []string {
		var names []string
		for _, k := range channelKinds {
			names = append(names, k.Name)
		}
		return names
	}())
	for _, ck := range channelKinds {
		k, err := kinds.Lookup(ck.Name)
		require.NoError(t, err)
		var keys []string
		for _, f := range ck.Fields {
			keys = append(keys, f.Key)
			require.NotEmpty(t, f.Label)
			require.True(t, slices.Contains([]string{"text", "url", "password", "lines", "headers", "textarea", "select"}, f.Input), f.Input)
		}
		require.ElementsMatch(t, k.Keys(), keys, ck.Name)
	}
}

func TestPreviewTimesFollowTheZone(t *testing.T) {
	t.Parallel()
	// 02:30 in New York is skipped by the spring change of 8 March 2026:
	// it runs once right after the gap.
	d := preview(&monitorForm{Kind: "cron", Expr: "30 2 * * *", TZ: "America/New_York"}, time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC))
	require.Empty(t, d.Error)
	require.Equal(t, "At 02:30 every day", d.Words)
	require.Equal(t, []string{
		"Sun 8 Mar 2026, 03:00:00 EDT", "Mon 9 Mar 2026, 02:30:00 EDT", "Tue 10 Mar 2026, 02:30:00 EDT",
		"Wed 11 Mar 2026, 02:30:00 EDT", "Thu 12 Mar 2026, 02:30:00 EDT",
	}, d.Times)
}

func TestPreviewFollowsTheDialect(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	d := preview(&monitorForm{Kind: "cron", Expr: "30 2 * * *", TZ: "America/New_York", Dialect: "robfig"}, now)
	require.Empty(t, d.Error)
	require.Equal(t, "At 02:30 every day", d.Words)
	require.Equal(t, "Mon 9 Mar 2026, 02:30:00 EDT", d.Times[0], "robfig skips the spring day")

	d = preview(&monitorForm{Kind: "cron", Expr: "0 30 2 ? * 1#2", TZ: "Europe/Berlin", Dialect: "quartz"}, now)
	require.Empty(t, d.Error)
	require.Equal(t, "At 02:30 on the second Sunday of the month", d.Words)
	require.Equal(t, []string{"Sun 8 Mar 2026, 02:30:00 CET", "Sun 12 Apr 2026, 02:30:00 CEST"}, d.Times[:2])

	d = preview(&monitorForm{Kind: "cron", Expr: "0 30 2 ? * 1#2", TZ: "Europe/Berlin"}, now)
	require.Contains(t, d.Error, `set schedule.dialect to "quartz"`)

	d = preview(&monitorForm{Kind: "cron", Expr: "30 2 * * *", Dialect: "quartz"}, now)
	require.Contains(t, d.Error, "seconds first")

	d = preview(&monitorForm{Kind: "cron", Expr: "@every 90m", Dialect: "robfig"}, now)
	require.Empty(t, d.Error)
	require.True(t, d.Interval)
	require.Contains(t, d.Words, "every 1 hour 30 minutes")

	w, z := scheduleWords(monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 30 2 ? * 1#2", TZ: "Europe/Berlin",
		Dialect: monitors.DialectQuartz})
	require.Equal(t, "at 02:30 on the second Sunday of the month", w)
	require.Equal(t, "Europe/Berlin, as Quartz reads it", z)
	w, z = scheduleWords(monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "CRON_TZ=Asia/Tokyo 0 0 2 * * *",
		Dialect: monitors.DialectRobfig})
	require.Equal(t, "at 02:00 every day", w)
	require.Equal(t, "Asia/Tokyo, as robfig/cron reads it", z)
}

func TestPreviewOnCalendar(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC)
	d := preview(&monitorForm{Kind: "oncalendar", Expr: "Mon..Fri 02:30", TZ: "Europe/Berlin"}, now)
	require.Empty(t, d.Error)
	require.NotEmpty(t, d.Words)
	require.Equal(t, []string{"Fri 27 Mar 2026, 02:30:00 CET", "Mon 30 Mar 2026, 02:30:00 CEST"}, d.Times[:2])
	d = preview(&monitorForm{Kind: "oncalendar", TZ: "Europe/Berlin"}, now)
	require.Contains(t, d.Error, "Calendar expression: enter one")
	d = preview(&monitorForm{Kind: "oncalendar", Expr: "Mon..Fri 25:00"}, now)
	require.Equal(t, `Calendar expression: "Mon..Fri 25:00" is not a systemd calendar expression: hour 25 is out of range (0 to 23).`, d.Error,
		"an OnCalendar mistake is named as one, not as a cron expression's")
	d = preview(&monitorForm{Kind: "oncalendar", Expr: "*-02-30"}, now)
	require.Equal(t, `Calendar expression: "*-02-30" never elapses after 2020-01-01.`, d.Error)
	d = preview(&monitorForm{Kind: "cron", Expr: "61 * * * *"}, now)
	require.True(t, strings.HasPrefix(d.Error, "Cron expression: "), d.Error)
}
