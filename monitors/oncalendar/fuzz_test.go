package oncalendar_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors/oncalendar"
	"github.com/vigilhq/vigil/monitors/oncalendar/internal/oracle"
)

// FuzzParse checks that Parse never panics or hangs on any input, that
// what it accepts prints a normalized form that parses to itself and has a
// description, and that Next and Prev return instants strictly after and
// before their argument, around daylight-saving changes included. The
// curated expressions and some wrong ones seed it (plain `go test` runs
// the seeds); `go test -fuzz FuzzParse` explores further.
func FuzzParse(f *testing.F) {
	for _, e := range oracle.Curated {
		f.Add(e)
	}
	for _, e := range []string{"", "Mon..", "*-*~29", "*:0/0", "@99999999999999999999", "00:00:00.9999995",
		"1:2:3.1234567", "Mon,Tue,", "*-*-* 1,2,3,4,5,6,7,8,9:00", "2199-12-31 23:59:59", "*-*~28/27", "12:00 CET", "weekly Etc/UTC"} {
		f.Add(e)
	}
	zones := []*time.Location{time.UTC}
	for _, z := range []string{"America/New_York", "Australia/Lord_Howe", "Pacific/Chatham", "America/Havana"} {
		loc, err := time.LoadLocation(z)
		require.NoError(f, err)
		zones = append(zones, loc)
	}
	starts := []time.Time{
		time.Date(2026, 3, 8, 6, 59, 30, 0, time.UTC),    // just before New York's spring gap
		time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC),    // New York's second 01:30
		time.Date(2026, 10, 3, 15, 45, 0, 0, time.UTC),   // just after Lord Howe's spring gap
		time.Date(2026, 3, 8, 4, 30, 0, 0, time.UTC),     // Havana's midnight gap
		time.Date(2199, 12, 31, 23, 59, 59, 0, time.UTC), // the last year systemd knows
	}
	f.Fuzz(func(t *testing.T, expr string) {
		for _, loc := range zones {
			e, err := oncalendar.Parse(expr, loc)
			if err != nil {
				require.Nil(t, e)
				require.NotEmpty(t, err.Error())
				return
			}
			again, err := oncalendar.Parse(e.String(), loc)
			require.NoError(t, err, "String() %q does not parse", e.String())
			require.Equal(t, e.String(), again.String())
			require.NotEmpty(t, e.Describe())
			for _, start := range starts {
				if n := e.Next(start); !n.IsZero() {
					require.True(t, n.After(start), "Next(%s) = %s", start, n)
				}
				if p := e.Prev(start); !p.IsZero() {
					require.True(t, p.Before(start), "Prev(%s) = %s", start, p)
				}
			}
		}
	})
}
