package oracle

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Zones are the zones the vectors and the differential test cover: UTC and
// zones with every kind of 2026 transition (an hour at 02:00, at midnight,
// half an hour, at 02:45), on both hemispheres, and one without any.
var Zones = []string{
	"UTC",
	"America/New_York",
	"Europe/London",
	"Europe/Berlin",
	"Australia/Sydney",
	"Australia/Lord_Howe",
	"Pacific/Chatham",
	"America/Santiago",
	"America/Havana",
	"Asia/Kolkata",
}

// Transitions returns the instants in year at which loc's UTC offset
// changes.
func Transitions(loc *time.Location, year int) []time.Time {
	var out []time.Time
	t := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(year+1, 1, 1, 0, 0, 0, 0, time.UTC)
	_, off := t.In(loc).Zone()
	for t.Before(end) {
		n := t.Add(time.Hour)
		if _, o := n.In(loc).Zone(); o != off {
			lo, hi := t, n // offset changes in (lo, hi]
			for hi.Sub(lo) > time.Second {
				mid := lo.Add(hi.Sub(lo) / 2)
				if _, mo := mid.In(loc).Zone(); mo == off {
					lo = mid
				} else {
					hi = mid
				}
			}
			out = append(out, hi)
			off = o
		}
		t = n
	}
	return out
}

// BaseTimes returns the base times the vectors start from in loc: around
// every 2026 transition (a day before, just before, inside the hour that
// repeats or is skipped, just after), or a few plain dates in a zone
// without transitions.
func BaseTimes(loc *time.Location) []time.Time {
	tr := Transitions(loc, 2026)
	if len(tr) == 0 {
		return []time.Time{
			time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(2026, 2, 27, 23, 0, 0, 0, time.UTC),
			time.Date(2026, 12, 31, 22, 30, 0, 0, time.UTC),
		}
	}
	var out []time.Time
	for _, t := range tr {
		for _, d := range []time.Duration{-25 * time.Hour, -2 * time.Hour, -40 * time.Minute, -time.Second, 20 * time.Minute, 50 * time.Minute, 2 * time.Hour} {
			out = append(out, t.Add(d))
		}
	}
	return out
}

// Curated are expressions every vector run covers: systemd.time(7)'s
// examples and times on either side of each listed zone's transitions.
var Curated = []string{
	"Mon..Fri 02:30", "Sat,Sun 01:00", "*-*-* *:00/15:00", "*-*~01 02:30", "daily",
	"minutely", "hourly", "weekly", "monthly", "yearly", "annually", "quarterly", "semiannually",
	"*-*-* 02:30", "*-*-* 02,03:30", "*-*-* 01:30", "*-*-* 00:30", "*-*-* 23:30", "*-*-* 03:00",
	"*-*-* 02:00", "*-*-* 01:59:59", "*-*-* 02:15", "*-*-* 02:45", "*-*-* 03:15", "*-*-* 03:45",
	"*-*-* 00:00", "*-*-* 00:15", "*-*-* 23:15", "*-*-* 01:00", "*-*-* 00,01:00",
	"*-*-* *:30", "*-*-* *:15", "*-*-* *:45", "*-*-* *:*:00", "*:0/20", "*:00/45", "*-*-* 00/2:00",
	"*-*-* 1..4:15", "*-*-* 02..03:00/10", "Sun *-*-* 02:00", "Sun 02:30", "Sun 01:30", "Sat 23:45",
	"Sat 23:30", "Sun 00:30", "Mon,Wed,Fri 08:00", "Mon-Fri 09:00", "Monday..Wednesday 2:5",
	"*-*-01 00:00", "*-*-1,15 12:00", "*-*~01", "*-*~03/1 06:00", "*-02~01 00:00", "*-*~1..3 04:00",
	"*-*-* 02:30 UTC", "Mon..Fri 02:30 Europe/Berlin", "*-*-* 09:00 America/New_York",
	"*-*-* 02:30 Australia/Lord_Howe", "*-*-* 02:30:30", "*-*-* *:*:0/30", "*-*-* 02:*:0/20",
	"*-01,04,07,10-01 00:00", "2026-*-* 02:30", "2026-03-* 02:30", "2026-04-01..07 02:30",
	"*-03,04,09,10-* 02:00/15", "Mon *-*-1..7 03:00", "Fri *-*~07/1 23:00", "*-*-* 2:30:15.5",
	"*-*-* 12:00 Pacific/Chatham", "*-*-* 00:00 America/Havana", "*-*-* 00:00 America/Santiago",
	"*-2-29 02:30", "Thu *-*-* 2..3:*", "*-*-* 01..03:00/20:00",
}

var zonesInExpr = []string{"UTC", "utc", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Etc/UTC"}

var dayNames = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

var shortNames = []string{"minutely", "hourly", "daily", "weekly", "monthly", "yearly", "annually", "quarterly", "semiannually", "semi-annually", "biannually", "Daily", "HOURLY"}

// Random returns a random expression from systemd.time(7)'s grammar,
// mostly valid, sometimes not (out-of-range values, ranges backwards,
// repetitions too large), for the differential test.
func Random(r *rand.Rand) string {
	if r.IntN(12) == 0 {
		s := shortNames[r.IntN(len(shortNames))]
		if r.IntN(4) == 0 {
			s += " " + zonesInExpr[r.IntN(len(zonesInExpr))]
		}
		return s
	}
	var parts []string
	if r.IntN(3) == 0 {
		parts = append(parts, weekdays(r))
	}
	if r.IntN(3) > 0 {
		sep := "-"
		if r.IntN(6) == 0 {
			sep = "~"
		}
		switch r.IntN(3) {
		case 0:
			parts = append(parts, chain(r, 1, 12, 2)+sep+chain(r, 1, 31, 3))
		default:
			parts = append(parts, chain(r, 2025, 2028, 2)+"-"+chain(r, 1, 12, 2)+sep+chain(r, 1, 31, 3))
		}
	}
	if len(parts) == 0 || r.IntN(5) > 0 {
		t := chain(r, 0, 23, 3) + ":" + chain(r, 0, 59, 3)
		if r.IntN(2) == 0 {
			t += ":" + chain(r, 0, 59, 2)
		}
		parts = append(parts, t)
	}
	if r.IntN(7) == 0 {
		parts = append(parts, zonesInExpr[r.IntN(len(zonesInExpr))])
	}
	return strings.Join(parts, " ")
}

func weekdays(r *rand.Rand) string {
	var items []string
	for range 1 + r.IntN(3) {
		a := r.IntN(7)
		name := func(i int) string {
			n := dayNames[i+7*r.IntN(2)]
			switch r.IntN(5) {
			case 0:
				return strings.ToLower(n)
			case 1:
				return strings.ToUpper(n)
			}
			return n
		}
		if r.IntN(3) == 0 {
			b := a + r.IntN(7-a)
			if r.IntN(10) == 0 {
				b = r.IntN(7)
			}
			sep := ".."
			if r.IntN(3) == 0 {
				sep = "-"
			}
			items = append(items, name(a)+sep+name(b))
		} else {
			items = append(items, name(a))
		}
	}
	return strings.Join(items, ",")
}

// chain returns "*" or a list of up to n components over [lo, hi].
func chain(r *rand.Rand, lo, hi, n int) string {
	if r.IntN(3) == 0 {
		return "*"
	}
	val := func() int {
		if r.IntN(25) == 0 {
			return hi + 1 + r.IntN(3)
		}
		return lo + r.IntN(hi-lo+1)
	}
	var items []string
	for range 1 + r.IntN(n) {
		a := val()
		s := fmt.Sprintf("%02d", a)
		if lo >= 2000 && r.IntN(4) == 0 {
			s = fmt.Sprintf("%02d", a%100)
		}
		switch r.IntN(6) {
		case 0:
			b := a + r.IntN(max(1, hi-a+2))
			if r.IntN(12) == 0 {
				b = lo + r.IntN(hi-lo+1)
			}
			s += fmt.Sprintf("..%02d", b)
		case 1:
			s += fmt.Sprintf("/%d", 1+r.IntN(max(1, (hi-lo)/3)))
		case 2:
			b := a + r.IntN(max(1, hi-a+2))
			s += fmt.Sprintf("..%02d/%d", b, 1+r.IntN(max(1, (hi-lo)/4)))
		}
		items = append(items, s)
	}
	return strings.Join(items, ",")
}
