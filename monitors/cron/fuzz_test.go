package cron

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzParse checks that Parse never panics or hangs, and that whatever it
// accepts behaves: Next and Prev return instants strictly after and before
// their argument, and agree with each other. Seeds live in
// testdata/fuzz/FuzzParse, so plain `go test` runs them.
func FuzzParse(f *testing.F) {
	f.Add("30 2 * * *")
	f.Add("0 0 * 2 MON#5")

	zones := []*time.Location{
		time.UTC,
		mustLoad(f, "America/New_York"),
		mustLoad(f, "Australia/Lord_Howe"),
		mustLoad(f, "America/Santiago"),
		time.FixedZone("", 5*3600+45*60),
	}
	starts := []time.Time{
		time.Date(2026, 3, 8, 6, 59, 30, 0, time.UTC),  // just before New York's spring gap
		time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC),  // New York's second 01:30
		time.Date(2026, 10, 3, 15, 45, 0, 0, time.UTC), // inside Lord Howe's spring gap
		time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC),
	}

	f.Fuzz(func(t *testing.T, expr string) {
		e, err := Parse(expr)
		if err != nil {
			require.Nil(t, e)
			require.NotEmpty(t, err.Error())
			return
		}
		again, err := Parse(e.String())
		require.NoError(t, err, "String() %q does not parse", e.String())
		require.Equal(t, e.String(), again.String())
		require.NotEmpty(t, e.Describe())

		for _, loc := range zones {
			for _, start := range starts {
				next, prev := e.Next(start, loc), e.Prev(start, loc)
				if next.IsZero() || prev.IsZero() {
					// Only a job following elapsed time whose every wall time
					// falls into daylight-saving gaps may never fire; the same
					// expression fires without them.
					require.False(t, e.wallClock, "%q never fires in %s around %s", expr, loc, start)
					require.True(t, changesOffset(loc, start), "%q never fires in %s, which has no DST", expr, loc)
					require.False(t, e.Next(start, time.UTC).IsZero(), "%q never fires in UTC", expr)
					continue
				}
				require.True(t, next.After(start), "Next(%s) = %s in %s", start, next, loc)
				require.True(t, prev.Before(start), "Prev(%s) = %s in %s", start, prev, loc)
				require.Zero(t, next.Nanosecond())

				// Nothing fires strictly between prev and next except,
				// possibly, start itself.
				afterPrev, beforeNext := e.Next(prev, loc), e.Prev(next, loc)
				startFires := afterPrev.Equal(start)
				if !startFires {
					require.True(t, afterPrev.Equal(next), "Next(Prev(%s)) = %s, want %s in %s", start, afterPrev, next, loc)
				}
				if startFires {
					require.True(t, beforeNext.Equal(start), "Prev(Next(%s)) = %s in %s", start, beforeNext, loc)
				} else {
					require.True(t, beforeNext.Equal(prev), "Prev(Next(%s)) = %s, want %s in %s", start, beforeNext, prev, loc)
				}
			}
		}
	})
}

// changesOffset reports whether loc changes its UTC offset in the year
// after start.
func changesOffset(loc *time.Location, start time.Time) bool {
	_, first := start.In(loc).Zone()
	for m := 1; m <= 12; m++ {
		if _, off := start.AddDate(0, m, 0).In(loc).Zone(); off != first {
			return true
		}
	}
	return false
}
