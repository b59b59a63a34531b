package cron

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mustLoad(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return tm
}

// checkChain asserts that the fires after start are exactly want (RFC 3339
// with the zone's offset), and that Prev walks the same instants backwards.
func checkChain(t *testing.T, expr string, loc *time.Location, start string, want []string) {
	t.Helper()
	e, err := Parse(expr)
	require.NoError(t, err)
	from := mustTime(t, start)

	var got []string
	cur := from
	for range want {
		cur = e.Next(cur, loc)
		require.False(t, cur.IsZero())
		got = append(got, cur.Format(time.RFC3339))
	}
	require.Equal(t, want, got, "Next chain of %q from %s", expr, start)

	for i := len(want) - 1; i > 0; i-- {
		prev := e.Prev(mustTime(t, want[i]), loc)
		require.Equal(t, want[i-1], prev.Format(time.RFC3339), "Prev of %s", want[i])
	}
	first := e.Prev(mustTime(t, want[0]), loc)
	require.False(t, first.After(from), "Prev of the first fire %s is %s, after the start", want[0], first)
}

func TestDST(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		zone  string
		expr  string
		start string
		want  []string
	}{
		// America/New_York 2026: clocks go 01:59:59-05:00 -> 03:00-04:00 on
		// 8 March and 01:59:59-04:00 -> 01:00-05:00 on 1 November.
		{"NY repeated 01:30 fires once", "America/New_York", "30 1 * * *", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00", "2026-11-03T01:30:00-05:00"}},
		{"NY skipped 02:30 fires at 03:00", "America/New_York", "30 2 * * *", "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"NY hourly fires at both 01:00", "America/New_York", "0 * * * *", "2026-11-01T00:30:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00"}},
		{"NY hourly skips 02:00", "America/New_York", "0 * * * *", "2026-03-08T00:30:00-05:00",
			[]string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00"}},
		{"NY two times in the repeated hour", "America/New_York", "15,45 1 * * *", "2026-11-01T00:00:00-04:00",
			[]string{"2026-11-01T01:15:00-04:00", "2026-11-01T01:45:00-04:00", "2026-11-02T01:15:00-05:00"}},
		{"NY minute step is elapsed time", "America/New_York", "*/30 1 * * *", "2026-11-01T00:00:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T01:00:00-05:00",
				"2026-11-01T01:30:00-05:00", "2026-11-02T01:00:00-05:00"}},
		{"NY start inside the second 01:xx", "America/New_York", "30 1 * * *", "2026-11-01T01:10:00-05:00",
			[]string{"2026-11-02T01:30:00-05:00"}},
		{"NY start after the first 01:30", "America/New_York", "30 1 * * *", "2026-11-01T01:40:00-04:00",
			[]string{"2026-11-02T01:30:00-05:00"}},
		{"NY skipped times collapse", "America/New_York", "0,30 2 * * *", "2026-03-08T01:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"}},
		{"NY skipped time collapses with 03:00", "America/New_York", "0 2,3 * * *", "2026-03-08T00:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"}},
		{"NY before and in the gap", "America/New_York", "59 1,2 * * *", "2026-03-08T00:00:00-05:00",
			[]string{"2026-03-08T01:59:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-09T01:59:00-04:00"}},
		{"NY start one second before the gap", "America/New_York", "30 2 * * *", "2026-03-08T01:59:59-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"NY weekly job in the gap", "America/New_York", "30 2 * * SUN", "2026-03-01T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-15T02:30:00-04:00"}},

		// Europe/Berlin 2026: 29 March 02:00 -> 03:00, 25 October 03:00 -> 02:00.
		{"Berlin skipped 02:30", "Europe/Berlin", "30 2 * * *", "2026-03-28T12:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"Berlin repeated 02:30", "Europe/Berlin", "30 2 * * *", "2026-10-24T12:00:00+02:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"Berlin every 30 minutes", "Europe/Berlin", "*/30 * * * *", "2026-10-25T01:45:00+02:00",
			[]string{"2026-10-25T02:00:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-25T02:00:00+01:00",
				"2026-10-25T02:30:00+01:00", "2026-10-25T03:00:00+01:00"}},
		{"Berlin every minute across the gap", "Europe/Berlin", "* * * * *", "2026-03-29T01:58:00+01:00",
			[]string{"2026-03-29T01:59:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T03:01:00+02:00"}},

		// Australia/Lord_Howe 2026: a 30-minute shift. 5 April 02:00+11:00 ->
		// 01:30+10:30; 4 October 02:00+10:30 -> 02:30+11:00.
		{"Lord Howe skipped 02:15", "Australia/Lord_Howe", "15 2 * * *", "2026-10-03T12:00:00+10:30",
			[]string{"2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"}},
		{"Lord Howe hourly skips 02:00", "Australia/Lord_Howe", "0 * * * *", "2026-10-04T00:30:00+10:30",
			[]string{"2026-10-04T01:00:00+10:30", "2026-10-04T03:00:00+11:00", "2026-10-04T04:00:00+11:00"}},
		{"Lord Howe half-hourly in spring", "Australia/Lord_Howe", "*/30 * * * *", "2026-10-04T01:15:00+10:30",
			[]string{"2026-10-04T01:30:00+10:30", "2026-10-04T02:30:00+11:00", "2026-10-04T03:00:00+11:00"}},
		{"Lord Howe repeated 01:45", "Australia/Lord_Howe", "45 1 * * *", "2026-04-04T12:00:00+11:00",
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"}},
		{"Lord Howe half-hourly in autumn", "Australia/Lord_Howe", "*/30 * * * *", "2026-04-05T01:00:00+11:00",
			[]string{"2026-04-05T01:30:00+11:00", "2026-04-05T01:30:00+10:30", "2026-04-05T02:00:00+10:30"}},
		{"Lord Howe hourly in autumn", "Australia/Lord_Howe", "0 * * * *", "2026-04-05T00:30:00+11:00",
			[]string{"2026-04-05T01:00:00+11:00", "2026-04-05T02:00:00+10:30"}},

		// America/Santiago 2026, changes at midnight: 5 September 23:59:59-04:00
		// -> 6 September 01:00-03:00 (Sunday's 00:xx does not exist);
		// 4 April 23:59:59-03:00 -> 23:00-04:00 (Saturday's 23:xx twice).
		{"Santiago skipped midnight", "America/Santiago", "0 0 * * *", "2026-09-05T12:00:00-04:00",
			[]string{"2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"}},
		{"Santiago skipped Sunday 00:30", "America/Santiago", "30 0 * * 0", "2026-09-01T12:00:00-04:00",
			[]string{"2026-09-06T01:00:00-03:00", "2026-09-13T00:30:00-03:00"}},
		{"Santiago hourly across the gap", "America/Santiago", "0 * * * *", "2026-09-05T22:30:00-04:00",
			[]string{"2026-09-05T23:00:00-04:00", "2026-09-06T01:00:00-03:00", "2026-09-06T02:00:00-03:00"}},
		{"Santiago repeated 23:30", "America/Santiago", "30 23 * * *", "2026-04-04T12:00:00-03:00",
			[]string{"2026-04-04T23:30:00-03:00", "2026-04-05T23:30:00-04:00"}},
		{"Santiago midnight after the repeat", "America/Santiago", "0 0 * * *", "2026-04-04T12:00:00-03:00",
			[]string{"2026-04-05T00:00:00-04:00", "2026-04-06T00:00:00-04:00"}},
		{"Santiago Saturday half-hours", "America/Santiago", "*/30 23 * * 6", "2026-04-04T22:00:00-03:00",
			[]string{"2026-04-04T23:00:00-03:00", "2026-04-04T23:30:00-03:00", "2026-04-04T23:00:00-04:00",
				"2026-04-04T23:30:00-04:00", "2026-04-11T23:00:00-04:00"}},

		// America/Havana 2026: 7 March 23:59:59-05:00 -> 8 March 01:00-04:00;
		// 1 November 00:59:59-04:00 -> 00:00-05:00.
		{"Havana skipped midnight", "America/Havana", "0 0 * * *", "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T01:00:00-04:00", "2026-03-09T00:00:00-04:00"}},
		{"Havana yearly date in the gap", "America/Havana", "30 0 8 3 *", "2026-01-01T00:00:00-05:00",
			[]string{"2026-03-08T01:00:00-04:00", "2027-03-08T00:30:00-05:00"}},
		{"Havana repeated midnight", "America/Havana", "0 0 * * *", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00"}},
		{"Havana hourly in autumn", "America/Havana", "0 * * * *", "2026-10-31T23:30:00-04:00",
			[]string{"2026-11-01T00:00:00-04:00", "2026-11-01T00:00:00-05:00", "2026-11-01T01:00:00-05:00"}},

		// Pacific/Apia skipped 30 December 2011 entirely.
		{"Apia skipped day, specific time", "Pacific/Apia", "0 12 * * *", "2011-12-29T00:00:00-10:00",
			[]string{"2011-12-29T12:00:00-10:00", "2011-12-31T00:00:00+14:00", "2011-12-31T12:00:00+14:00"}},
		{"Apia skipped day, elapsed", "Pacific/Apia", "0 */12 * * *", "2011-12-29T00:00:00-10:00",
			[]string{"2011-12-29T12:00:00-10:00", "2011-12-31T00:00:00+14:00", "2011-12-31T12:00:00+14:00"}},

		// UTC and fixed zones have no changes.
		{"UTC daily", "UTC", "30 2 * * *", "2026-03-08T00:00:00Z",
			[]string{"2026-03-08T02:30:00Z", "2026-03-09T02:30:00Z"}},
		{"UTC hourly", "UTC", "0 * * * *", "2026-11-01T00:30:00Z",
			[]string{"2026-11-01T01:00:00Z", "2026-11-01T02:00:00Z"}},

		// Seconds-field expressions follow the same rule.
		{"seconds, skipped", "America/New_York", "15 30 2 * * *", "2026-03-08T00:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:15-04:00"}},
		{"seconds, repeated", "America/New_York", "15 30 1 * * *", "2026-11-01T00:00:00-04:00",
			[]string{"2026-11-01T01:30:15-04:00", "2026-11-02T01:30:15-05:00"}},
		{"seconds, all collapse", "America/New_York", "*/10 30 2 * * *", "2026-03-08T01:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-09T02:30:10-04:00"}},
		{"seconds, every second of a repeated minute", "America/New_York", "* 30 1 * * *", "2026-11-01T01:30:58-04:00",
			[]string{"2026-11-01T01:30:59-04:00", "2026-11-02T01:30:00-05:00"}},
		{"seconds, elapsed across the gap", "America/New_York", "*/20 59 * * * *", "2026-03-08T01:58:50-05:00",
			[]string{"2026-03-08T01:59:00-05:00", "2026-03-08T01:59:20-05:00", "2026-03-08T01:59:40-05:00",
				"2026-03-08T03:59:00-04:00"}},
		{"seconds, elapsed in autumn", "America/New_York", "0 0 * * * *", "2026-11-01T00:30:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkChain(t, tt.expr, mustLoad(t, tt.zone), tt.start, tt.want)
		})
	}
}

func TestFixedZones(t *testing.T) {
	t.Parallel()

	for _, loc := range []*time.Location{
		time.FixedZone("", 5*3600+30*60),
		time.FixedZone("", -(9*3600 + 30*60)),
		time.FixedZone("X", 14*3600),
		time.FixedZone("", 0),
	} {
		e, err := Parse("30 2 * * *")
		require.NoError(t, err)
		start := time.Date(2026, 3, 8, 0, 0, 0, 0, loc)
		got := e.Next(start, loc)
		require.Equal(t, time.Date(2026, 3, 8, 2, 30, 0, 0, loc), got)
		require.Equal(t, loc, got.Location())
		require.Equal(t, time.Date(2026, 3, 9, 2, 30, 0, 0, loc), e.Next(got, loc))
		require.Equal(t, time.Date(2026, 3, 7, 2, 30, 0, 0, loc), e.Prev(got, loc))
	}
}

func TestPrevAroundDST(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")

	tests := []struct {
		expr, before, want string
	}{
		{"30 2 * * *", "2026-03-08T03:00:01-04:00", "2026-03-08T03:00:00-04:00"},
		{"30 2 * * *", "2026-03-08T03:00:00-04:00", "2026-03-07T02:30:00-05:00"},
		{"30 1 * * *", "2026-11-01T01:40:00-05:00", "2026-11-01T01:30:00-04:00"},
		{"30 1 * * *", "2026-11-01T01:20:00-05:00", "2026-11-01T01:30:00-04:00"},
		{"30 1 * * *", "2026-11-02T00:00:00-05:00", "2026-11-01T01:30:00-04:00"},
		{"30 1 * * *", "2026-11-01T01:30:00-04:00", "2026-10-31T01:30:00-04:00"},
		{"0 * * * *", "2026-11-01T02:00:00-05:00", "2026-11-01T01:00:00-05:00"},
		{"0 * * * *", "2026-11-01T01:00:00-05:00", "2026-11-01T01:00:00-04:00"},
		{"0 * * * *", "2026-03-08T03:00:00-04:00", "2026-03-08T01:00:00-05:00"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.expr)
		require.NoError(t, err)
		got := e.Prev(mustTime(t, tt.before), ny)
		require.Equal(t, tt.want, got.Format(time.RFC3339), "Prev(%q, %s)", tt.expr, tt.before)
	}
}

func TestSubsecondBounds(t *testing.T) {
	t.Parallel()
	e, err := Parse("* * * * * *")
	require.NoError(t, err)
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

	// Strictly after and strictly before, with fractions of a second.
	require.Equal(t, base.Add(time.Second), e.Next(base, time.UTC))
	require.Equal(t, base.Add(time.Second), e.Next(base.Add(time.Nanosecond), time.UTC))
	require.Equal(t, base.Add(-time.Second), e.Prev(base, time.UTC))
	require.Equal(t, base, e.Prev(base.Add(time.Nanosecond), time.UTC))
	require.Equal(t, base, e.Prev(base.Add(999*time.Millisecond), time.UTC))

	// A nil location means UTC.
	m, err := Parse("0 0 * * *")
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC), m.Next(base, nil))
	require.Equal(t, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), m.Prev(base, nil))
}
