package cron

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The tests in this file compare Next and Prev with a brute-force reading
// of the rules that shares no search code with the package: step through
// every instant, read its wall time with the time package, and match the
// fields one by one.

// refMatchDay matches a date the way cronsim and Vixie cron do, day by day.
func refMatchDay(e *Expr, tm time.Time) bool {
	y, mo, d := tm.Date()
	if e.month&(1<<int(mo)) == 0 {
		return false
	}
	last := time.Date(y, mo+1, 0, 0, 0, 0, 0, time.UTC).Day()
	lastWeekday := last
	for {
		wd := time.Date(y, mo, lastWeekday, 0, 0, 0, 0, time.UTC).Weekday()
		if wd != time.Saturday && wd != time.Sunday {
			break
		}
		lastWeekday--
	}
	dom := e.dom&(1<<d) != 0 || (e.domLast && d == last) || (e.domLastWeekday && d == lastWeekday)
	wd := int(tm.Weekday())
	dow := e.dow&(1<<wd) != 0 ||
		(e.dowLast&(1<<wd) != 0 && d+7 > last) ||
		e.dowNth[wd]&(1<<((d+6)/7)) != 0
	if e.dayAnd {
		return dom && dow
	}
	return dom || dow
}

// refMatchWall matches a wall time given as a UTC-located time.
func refMatchWall(e *Expr, w time.Time) bool {
	return e.second&(1<<w.Second()) != 0 && e.minute&(1<<w.Minute()) != 0 &&
		e.hour&(1<<w.Hour()) != 0 && refMatchDay(e, w)
}

// wallOf reads the wall clock at instant u as seconds on a UTC clock.
func wallOf(u int64, loc *time.Location) int64 {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return u + int64(off)
}

// refFires lists the fire instants in [lo, hi) by stepping step seconds
// at a time (60 for expressions without seconds: every offset involved is a
// whole number of minutes).
func refFires(e *Expr, loc *time.Location, lo, hi, step int64) []int64 {
	var out []int64
	u := lo - 2*secondsPerDay
	maxWall := wallOf(u, loc) // the latest wall time read so far
	for ; u < hi; u += step {
		w := wallOf(u, loc)
		fires := false
		if e.wallClock {
			// A wall-clock job fires once per scheduled wall time W, at the
			// first instant reading W or later.
			for c := maxWall + step; c <= w && !fires; c += step {
				fires = refMatchWall(e, time.Unix(c, 0).UTC())
			}
		} else {
			fires = refMatchWall(e, time.Unix(w, 0).UTC())
		}
		maxWall = max(maxWall, w)
		if fires && u >= lo {
			out = append(out, u)
		}
	}
	return out
}

// engineFires lists the fire instants in [lo, hi) with Next, and checks
// that Prev walks the same list backwards.
func engineFires(t *testing.T, e *Expr, loc *time.Location, lo, hi int64) []int64 {
	t.Helper()
	var out []int64
	for cur := time.Unix(lo-1, 0); ; {
		next := e.Next(cur, loc)
		require.True(t, next.After(cur), "Next(%s) = %s", cur, next)
		cur = next
		if cur.Unix() >= hi {
			break
		}
		out = append(out, cur.Unix())
	}
	var back []int64
	for cur := time.Unix(hi, 0); ; {
		prev := e.Prev(cur, loc)
		require.True(t, !prev.IsZero() && prev.Before(cur), "Prev(%s) = %s", cur, prev)
		cur = prev
		if cur.Unix() < lo {
			break
		}
		back = append([]int64{cur.Unix()}, back...)
	}
	require.Equal(t, fmtInstants(out, loc), fmtInstants(back, loc), "Prev disagrees with Next for %q in %s", e, loc)
	return out
}

func fmtInstants(us []int64, loc *time.Location) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = time.Unix(u, 0).In(loc).Format(time.RFC3339)
	}
	return out
}

// transitions returns the offset changes of loc during year y, and the end
// of the year: Go reports wrong zone bounds on the last day of leap years
// beyond a zone's table, which segmentAt works around.
func transitions(loc *time.Location, y int) []int64 {
	var out []int64
	u := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	end := time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for {
		seg := segmentAt(u, loc)
		if seg.end >= end {
			return append(out, end)
		}
		if _, off := time.Unix(seg.end, 0).In(loc).Zone(); int64(off) != seg.offset {
			out = append(out, seg.end)
		}
		u = seg.end
	}
}

// TestSegments checks segmentAt against plain offset lookups.
func TestSegments(t *testing.T) {
	t.Parallel()
	offset := func(u int64, loc *time.Location) int64 {
		_, off := time.Unix(u, 0).In(loc).Zone()
		return int64(off)
	}
	for _, name := range []string{"America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "Europe/Berlin", "America/Santiago", "Asia/Kolkata", "UTC"} {
		loc := mustLoad(t, name)
		lo := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		hi := time.Date(2070, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		for u := lo; u < hi; u += secondsPerDay + 7 { // every day, at a drifting time of day
			seg := segmentAt(u, loc)
			require.True(t, seg.start <= u && u < seg.end, "%s: %d not in [%d, %d)", name, u, seg.start, seg.end)
			require.Equal(t, offset(u, loc), seg.offset, name)
			if seg.start > lo {
				require.Equal(t, seg.offset, offset(seg.start, loc), name)
			}
			if seg.end < hi {
				require.Equal(t, seg.offset, offset(seg.end-1, loc), name)
			}
		}
	}
}

var referenceZones = []struct {
	name string
	year int
}{
	{"America/New_York", 2026},
	{"Europe/Berlin", 2026},
	{"Europe/Riga", 2021},
	{"Australia/Lord_Howe", 2026},
	{"Australia/Sydney", 2026},
	{"America/Santiago", 2026},
	{"America/Havana", 2026},
	{"Pacific/Chatham", 2026},
	{"America/St_Johns", 2026},
	{"Asia/Tehran", 2021},
	{"Pacific/Apia", 2011},
	{"Europe/London", 2045}, // beyond the zone's transition table: rule-based
	{"America/New_York", 2061},
	{"America/New_York", 2040}, // leap years beyond the tables: see transitions
	{"Australia/Sydney", 2048},
	{"Australia/Lord_Howe", 2052},
}

var referenceExprs = []string{
	"* * * * *", "*/15 * * * *", "0 * * * *", "30 * * * *", "*/7 * * * *", "59 * * * *",
	"0 */2 * * *", "30 */3 * * *", "* 2 * * *", "*/10 1-3 * * *", "5-10 * * * *",
	"0 0 * * *", "30 0 * * *", "0 1 * * *", "30 1 * * *", "0 2 * * *", "30 2 * * *", "45 2 * * *",
	"0 3 * * *", "15 3 * * *", "0 23 * * *", "30 23 * * *", "59 23 * * *",
	"0,30 1,2,3 * * *", "0 1-5 * * *", "15,45 0-4 * * *", "0 0,12 * * *", "10-20 2 * * *",
	"0 2 * * 0", "30 1 * * 6,0", "0 0 * * 1-5", "0 2 L * *", "0 2 * * 0L", "30 2 * * 0#1", "0 0 1 * *",
}

func TestReferenceAroundTransitions(t *testing.T) {
	t.Parallel()
	for _, z := range referenceZones {
		t.Run(fmt.Sprintf("%s/%d", z.name, z.year), func(t *testing.T) {
			t.Parallel()
			loc := mustLoad(t, z.name)
			trs := transitions(loc, z.year)
			require.NotEmpty(t, trs)
			for _, expr := range referenceExprs {
				e, err := Parse(expr)
				require.NoError(t, err)
				for _, tr := range trs {
					lo, hi := tr-30*3600, tr+30*3600
					want := refFires(e, loc, lo, hi, 60)
					got := engineFires(t, e, loc, lo, hi)
					require.Equal(t, fmtInstants(want, loc), fmtInstants(got, loc), "%q in %s around %s",
						expr, z.name, time.Unix(tr, 0).In(loc).Format(time.RFC3339))
				}
			}
		})
	}
}

func TestReferenceSeconds(t *testing.T) {
	t.Parallel()
	exprs := []string{"*/20 * * * * *", "15 30 2 * * *", "*/10 30 1 * * *", "* 59 1 * * *", "0 0 * * * *", "5 */30 * * * *"}
	for _, zone := range []string{"America/New_York", "Australia/Lord_Howe", "America/Santiago"} {
		loc := mustLoad(t, zone)
		for _, tr := range transitions(loc, 2026) {
			for _, expr := range exprs {
				e, err := Parse(expr)
				require.NoError(t, err)
				lo, hi := tr-2*3600, tr+2*3600
				want := refFires(e, loc, lo, hi, 1)
				got := engineFires(t, e, loc, lo, hi)
				require.Equal(t, fmtInstants(want, loc), fmtInstants(got, loc), "%q in %s", expr, zone)
			}
		}
	}
}

// TestReferenceDays checks the day matching (L, LW, nL, n#k, ranges, the
// AND/OR rule) against refMatchDay, day by day.
func TestReferenceDays(t *testing.T) {
	t.Parallel()
	doms := []string{"*", "?", "1", "31", "L", "LW", "1,L", "15,LW", "*/2", "1-7", "29", "30", "8-14", "*/10"}
	dows := []string{"*", "?", "MON", "1-5", "0,6", "5L", "0L", "7L", "MON#1", "FRI#5", "1#2,3#4", "SUN#5,SATL", "*/3", "2/3", "FRI-SUN"}
	months := []string{"*", "2", "FEB,AUG", "*/5"}
	for _, dom := range doms {
		for _, dow := range dows {
			for _, month := range months {
				expr := fmt.Sprintf("0 0 %s %s %s", dom, month, dow)
				e, err := Parse(expr)
				if err != nil {
					require.ErrorIs(t, err, ErrNeverFires, expr)
					continue
				}
				for day := daysFromCivil(2000, 1, 1); day < daysFromCivil(2102, 1, 1); day++ {
					if day == daysFromCivil(2029, 1, 1) {
						day = daysFromCivil(2099, 1, 1) // 2000-2028 has every kind of year; 2100 is no leap year
					}
					tm := time.Unix(day*secondsPerDay, 0).UTC()
					y, m, d := civilFromDays(day)
					mask := uint32(0)
					if e.month&(1<<m) != 0 {
						mask = e.dayMaskFor(daysIn(y, m), weekdayOfDays(daysFromCivil(y, m, 1)))
					}
					if want := refMatchDay(e, tm); want != (mask&(1<<d) != 0) {
						t.Fatalf("%q on %s: reference says %v", expr, tm.Format(time.DateOnly), want)
					}
				}
			}
		}
	}
}

// TestReferenceRandom compares random expressions in random zones over a
// few days around random instants.
func TestReferenceRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	zones := []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago",
		"America/Havana", "Pacific/Chatham", "UTC", "Asia/Kolkata"}
	for i := 0; i < 150; i++ {
		expr := strings.Join([]string{
			pick("*", "*/15", "0", "30", "0,30", "5-10", "59", "*/7", "1/20"),
			pick("*", "*/2", "0", "1", "2", "3", "1-3", "0,2", "23", "22-23", "*/3", "0-1"),
			pick("*", "*", "*", "1-15", "L", "*/3"),
			pick("*", "*", "3,4,9,10,11", "*/2"),
			pick("*", "*", "0", "6", "0,6", "1-5", "0L", "0#1"),
		}, " ")
		e, err := Parse(expr)
		require.NoError(t, err, expr)
		loc := mustLoad(t, pick(zones...))
		mid := time.Date(2024+rng.IntN(8), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), rng.IntN(24), 0, 0, 0, time.UTC).Unix()
		lo, hi := mid-3*secondsPerDay, mid+3*secondsPerDay
		want := refFires(e, loc, lo, hi, 60)
		got := engineFires(t, e, loc, lo, hi)
		require.Equal(t, fmtInstants(want, loc), fmtInstants(got, loc), "%q in %s", expr, loc)
	}
}
