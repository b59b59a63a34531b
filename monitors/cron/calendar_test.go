package cron

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCalendar(t *testing.T) {
	t.Parallel()
	start := time.Date(-1000, 1, 1, 0, 0, 0, 0, time.UTC)
	for tm := start; tm.Year() < 3000; tm = tm.AddDate(0, 0, 1) {
		days := floorDiv(tm.Unix(), secondsPerDay)
		y, m, d := civilFromDays(days)
		if y != int64(tm.Year()) || m != int(tm.Month()) || d != tm.Day() {
			t.Fatalf("civilFromDays(%d) = %d-%d-%d, want %s", days, y, m, d, tm.Format(time.DateOnly))
		}
		if got := daysFromCivil(y, m, d); got != days {
			t.Fatalf("daysFromCivil(%s) = %d, want %d", tm.Format(time.DateOnly), got, days)
		}
		if got := weekdayOfDays(days); got != int(tm.Weekday()) {
			t.Fatalf("weekday of %s = %d", tm.Format(time.DateOnly), got)
		}
		if d == 1 {
			require.Equal(t, time.Date(tm.Year(), tm.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day(), daysIn(y, m))
		}
	}
	require.Equal(t, int64(-1), floorDiv(-1, secondsPerDay))
	require.Equal(t, int64(-2), floorDiv(-86401, secondsPerDay))
}

// TestYearKinds backs checkFires: the years 2000-2027 contain all 14 kinds
// of year (leap or not, times the weekday of 1 January).
func TestYearKinds(t *testing.T) {
	t.Parallel()
	kinds := map[[2]int]bool{}
	for y := int64(2000); y < 2028; y++ {
		leap := 0
		if isLeap(y) {
			leap = 1
		}
		kinds[[2]int{leap, weekdayOfDays(daysFromCivil(y, 1, 1))}] = true
	}
	require.Len(t, kinds, 14)
}

// TestLongestGap backs the 50-year search bound: whether a day matches
// depends only on its month, the month's length and the weekday the month
// starts on, and no such kind of month is ever more than 40 years away
// from its next occurrence (29-day Februaries starting on a given weekday
// are the rarest). So an expression that fires at all fires at least once
// in any 50 years.
func TestLongestGap(t *testing.T) {
	t.Parallel()
	type kind struct{ month, length, weekday int }
	last := map[kind]int64{}
	longest := int64(0)
	for y := int64(1600); y < 2800; y++ { // three 400-year cycles
		for m := 1; m <= 12; m++ {
			k := kind{m, daysIn(y, m), weekdayOfDays(daysFromCivil(y, m, 1))}
			if prev, ok := last[k]; ok {
				longest = max(longest, y-prev)
			}
			last[k] = y
		}
	}
	require.Len(t, last, 12*7+7, "every month starts on every weekday; February has two lengths")
	require.Equal(t, int64(40), longest)
	require.Less(t, longest*31556952, int64(searchSeconds))

	// The expression that needs it: 29 February on a Monday.
	e, err := Parse("0 0 * 2 MON#5")
	require.NoError(t, err)
	got := e.Next(time.Date(2072, 2, 29, 0, 0, 0, 0, time.UTC), time.UTC)
	require.Equal(t, time.Date(2112, 2, 29, 0, 0, 0, 0, time.UTC), got)
	require.Equal(t, time.Date(2072, 2, 29, 0, 0, 0, 0, time.UTC), e.Prev(got, time.UTC))
}

// TestSearchBound: Next and Prev give up with the zero Time, and at the
// edges of the representable range they do not overflow.
func TestSearchBound(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")

	// 02:xx on the second Sunday of March has not existed in New York since
	// 2007 (the clocks skip it), and an elapsed-time job does not fire in a gap.
	e, err := Parse("* 2 * 3 SUN#2")
	require.NoError(t, err)
	require.True(t, e.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ny).IsZero())
	require.Equal(t, "2006-03-12T02:59:00-05:00", e.Prev(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ny).Format(time.RFC3339))
	// The same job at a specific minute fires at 03:00, as cronie does.
	w, err := Parse("30 2 * 3 SUN#2")
	require.NoError(t, err)
	require.Equal(t, "2026-03-08T03:00:00-04:00", w.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ny).Format(time.RFC3339))

	daily, err := Parse("0 0 * * *")
	require.NoError(t, err)
	for _, tm := range []time.Time{{}, time.Unix(1<<62, 0), time.Unix(-(1 << 62), 0), time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		for _, loc := range []*time.Location{time.UTC, ny} {
			if n := daily.Next(tm, loc); !n.IsZero() {
				require.True(t, n.After(tm))
			}
			if p := daily.Prev(tm, loc); !p.IsZero() {
				require.True(t, p.Before(tm))
			}
		}
	}
	require.Equal(t, time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC), daily.Next(time.Time{}, time.UTC))
}
