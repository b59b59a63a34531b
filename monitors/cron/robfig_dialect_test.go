package cron

import (
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"
)

func TestRobfigNextIsRobfigs(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	r, err := ParseRobfig("30 2 * * *")
	require.NoError(t, err)
	from := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)
	first := r.Next(from, ny)
	require.Equal(t, "2026-03-09T02:30:00-04:00", first.Format(time.RFC3339), "robfig skips the spring day")
	require.Equal(t, "2026-03-10T02:30:00-04:00", r.Next(first, ny).Format(time.RFC3339))

	// The library itself, as cron.New(cron.WithLocation(ny)) runs it.
	lib, err := robfig.ParseStandard("30 1 * * *")
	require.NoError(t, err)
	r, err = ParseRobfig("30 1 * * *")
	require.NoError(t, err)
	at := time.Date(2026, 10, 30, 0, 0, 0, 0, ny)
	want := at
	for range 6 {
		want, at = lib.Next(want.In(ny)), r.Next(at, ny)
		require.Equal(t, want, at)
	}
}

func TestRobfigSyntax(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	for _, expr := range []string{"30 2 * * *", "0 0 2 * * *", "@daily", "@every 1h30m", "CRON_TZ=Europe/Berlin 0 0 2 * * *",
		"0 0 ? * MON-FRI", "*/5 * * * *"} {
		_, err := ParseRobfig(expr)
		require.NoError(t, err, expr)
	}
	for _, expr := range []string{"0 0 L * *", "0 0 * * 5#3", "0 0 2 ? * 1#2 2026", "@reboot", "1 2 3", ""} {
		_, err := ParseRobfig(expr)
		require.Error(t, err, expr)
	}

	r, err := ParseRobfig("CRON_TZ=Europe/Berlin 0 0 2 * * *")
	require.NoError(t, err)
	require.Equal(t, berlin.String(), r.Zone().String())
	next := r.Next(time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), time.UTC)
	require.Equal(t, "2026-03-30T02:00:00+02:00", next.In(berlin).Format(time.RFC3339), "the prefix's zone wins; 02:00 on 29 March does not exist")

	r, err = ParseRobfig("@every 90m")
	require.NoError(t, err)
	every, ok := r.Every()
	require.True(t, ok)
	require.Equal(t, 90*time.Minute, every)
	require.Equal(t, "every 1h30m0s", r.Describe())
}

func TestRobfigDescribe(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		"30 2 * * *":         "at 02:30 every day",
		"0 0 2 * * MON":      "at 02:00 on Monday",
		"0 0 13 * FRI":       "at 00:00 on day 13 of the month and on Friday",
		"0 0 */2 * FRI":      "", // robfig: odd days or Fridays; cronie: odd Fridays
		"0 0 * * 1/2":        "", // robfig stops at Saturday, cronie goes on to Sunday
		"@hourly":            "every hour",
		"CRON_TZ=UTC @daily": "at 00:00 every day",
	} {
		r, err := ParseRobfig(expr)
		require.NoError(t, err, expr)
		require.Equal(t, want, r.Describe(), expr)
	}
}

// TestRobfigOrbit checks that Next and Prev follow the fire times of a
// running robfig/cron scheduler (its Next applied to each fire time in
// turn, from well before), across every 2026 transition of zones that
// change by an hour, by half an hour and at midnight: at each fire time,
// and between two of them, Prev names the earlier and Next the later.
func TestRobfigOrbit(t *testing.T) {
	t.Parallel()
	zones := []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Havana", "Pacific/Chatham",
		"America/Santiago"}
	exprs := []string{"30 2 * * *", "30 1 * * *", "0 * * * *", "0 0 * * *", "15 3 * * 0", "0 30 2 * * *",
		"0 0 1 1 *", "@weekly", "0 45 2 * * *", "30 0 * * *"}
	for _, name := range zones {
		loc, err := time.LoadLocation(name)
		require.NoError(t, err)
		for _, expr := range exprs {
			r, err := ParseRobfig(expr)
			require.NoError(t, err)
			for _, u := range transitions(loc, 2026) { // and the end of the year
				tr := time.Unix(u, 0)
				f := r.LibraryNext(tr.Add(-10*24*time.Hour), loc)
				for f.Before(tr.Add(2 * 24 * time.Hour)) {
					g := r.LibraryNext(f, loc)
					if f.After(tr.Add(-2 * 24 * time.Hour)) {
						require.Equal(t, f, r.Prev(g, loc), "%s %s: before %s", expr, name, g)
						require.Equal(t, g, r.Next(f, loc), "%s %s: after %s", expr, name, f)
						if mid := f.Add(g.Sub(f) / 2).Truncate(time.Second); mid.After(f) {
							require.Equal(t, f, r.Prev(mid, loc), "%s %s: before %s", expr, name, mid)
							require.Equal(t, g, r.Next(mid, loc), "%s %s: after %s", expr, name, mid)
						}
					}
					f = g
				}
			}
		}
	}
	lordHowe, err := time.LoadLocation("Australia/Lord_Howe")
	require.NoError(t, err)
	r, err := ParseRobfig("0 0 * * *")
	require.NoError(t, err)
	from := time.Date(2026, 4, 5, 3, 0, 0, 0, lordHowe)
	require.Equal(t, "2026-04-06T00:00:00+10:30", r.LibraryNext(from, lordHowe).Format(time.RFC3339))
	require.Equal(t, "2026-04-07T00:00:00+10:30", r.Next(from, lordHowe).Format(time.RFC3339),
		"the running scheduler went from 5 April straight to 7 April")

	r, err = ParseRobfig("0 0 1 1 *")
	require.NoError(t, err)
	require.True(t, r.Prev(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.UTC).Equal(time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)))
}
