package oncalendar

import (
	"time"

	"github.com/vigilhq/vigil/monitors/cron"
)

// usecPerSec is the resolution of systemd's clock: the seconds component
// of an expression is kept in microseconds.
const usecPerSec = 1_000_000

// maxIterations bounds one search, as systemd's MAX_CALENDAR_ITERATIONS
// does: a search that would go on longer reports no next elapse.
const maxIterations = 1000

// tm is C's struct tm as systemd's calendar code uses it: the fields may be
// out of range until mktime normalizes them. year is the full year and mon
// counts from 0.
type tm struct {
	year, mon, mday, hour, min, sec int
	wday                            int // 0 = Sunday, set by localtime
	isdst                           int // -1 unknown, 0 standard time, 1 daylight saving
}

// clock converts between instants and local fields in one zone the way
// glibc does. glibc's mktime starts from the UTC offset of its previous
// result (a static variable), and which of two readings of an ambiguous
// wall time it returns depends on that guess; systemd's search relies on
// it, so the guess is part of the state here too.
type clock struct {
	loc   *time.Location
	guess int64 // UTC offset in seconds of the last mktime result
}

func (c *clock) localtime(u int64) tm {
	t := time.Unix(u, 0).In(c.loc)
	isdst := 0
	if t.IsDST() {
		isdst = 1
	}
	return tm{
		year: t.Year(), mon: int(t.Month()) - 1, mday: t.Day(),
		hour: t.Hour(), min: t.Minute(), sec: t.Second(),
		wday: int(t.Weekday()), isdst: isdst,
	}
}

// wall returns f's fields read as seconds since the epoch of a UTC clock,
// normalizing fields out of range as mktime does (03-33 is 04-02).
func wall(f *tm) int64 {
	return time.Date(f.year, time.Month(f.mon+1), f.mday, f.hour, f.min, f.sec, 0, time.UTC).Unix()
}

// mktime is glibc's mktime (time/mktime.c, __mktime_internal) over c.loc:
// it inverts localtime by probing from the previous result's offset,
// returns for a wall time in a spring-forward gap the instant the gap's
// size away (preferring a daylight-saving reading), and honours a definite
// f.isdst by looking for a nearby instant with that flag. On success f is
// replaced by the normalized fields of the result.
func (c *clock) mktime(f *tm) (int64, bool) {
	want := wall(f)
	isdst := f.isdst
	t0 := want - c.guess
	t, t1, t2 := t0, t0, t0
	dst2 := 0
	probes := 6
	var got tm
	found := false
	for {
		got = c.localtime(t)
		dt := want - wall(&got)
		if dt == 0 {
			break
		}
		if t == t1 && t != t2 {
			var osc bool
			if isdst < 0 {
				osc = dst2 <= got.isdst
			} else {
				osc = (isdst != 0) != (got.isdst != 0)
			}
			if osc {
				found = true // in a gap: keep t, dt away from the request
				break
			}
		}
		probes--
		if probes == 0 {
			return 0, false
		}
		t1, t2, t = t2, t, t+dt
		dst2 = got.isdst
	}
	if !found && isdst >= 0 && isdst != got.isdst {
		const stride = 601200
		const bound = 536454000/2 + stride
		ok := false
	probe:
		for delta := int64(stride); delta < bound; delta += stride {
			for _, dir := range [2]int64{-1, 1} {
				ot := t + delta*dir
				otm := c.localtime(ot)
				if otm.isdst == isdst {
					t = ot + (want - wall(&otm))
					got = c.localtime(t)
					ok = true
					break probe
				}
			}
		}
		if !ok {
			return 0, false
		}
	}
	c.guess = want - t
	*f = got
	return t, true
}

// mktimeOK is mktime as systemd checks it: a negative result is a failure.
func (c *clock) mktimeOK(f *tm) bool {
	u, ok := c.mktime(f)
	return ok && u >= 0
}

// endOfMonth returns the day of f's month that is day-1 days before its
// last day, or -1 when there is none.
func (c *clock) endOfMonth(f *tm, day int) int {
	t := *f
	t.mon++
	t.mday = 1 - day
	if !c.mktimeOK(&t) || t.mon != f.mon {
		return -1
	}
	return t.mday
}

// match finds the earliest value of chain that is at least *val. It returns
// -1 when there is none, 1 when *val changed and 0 when it already matched.
// A nil chain matches everything.
func (e *Expr) match(c *clock, chain []component, eom bool, limit int, f *tm, val *int) int {
	if chain == nil {
		return 0
	}
	d, set := -1, false
	for _, k := range chain {
		start, stop := k.start, k.stop
		if eom {
			start = c.endOfMonth(f, k.start)
			stop = c.endOfMonth(f, k.stop)
			if stop > 0 {
				start, stop = stop, start
			}
		}
		if start >= *val {
			if !set || start < d {
				d, set = start, true
			}
		} else if k.repeat > 0 {
			n := start + k.repeat*((*val-start+k.repeat-1)/k.repeat)
			if (!set || n < d) && (stop < 0 || n <= stop) {
				d, set = n, true
			}
		}
	}
	if !set {
		return -1
	}
	r := 0
	if *val != d {
		r = 1
	}
	*val = d
	return r
}

// withinBounds normalizes f and reports 1 when nothing changed, 0 when a
// field overflowed and -1 on error: a year past maxYear, a failed
// conversion, or a normalization that went backwards. On 0, f holds the
// normalized time with the unit just below the highest one that changed
// reset (03-33 resumes at 04-01, not 04-02; 23:67 at 00:07 of the next
// day, as systemd 252 does).
func (c *clock) withinBounds(f *tm) int {
	if f.year > maxYear {
		return -1
	}
	t := *f
	if !c.mktimeOK(&t) {
		return -1
	}
	cmp := 0
	switch {
	case t.year != f.year:
		cmp = sign(t.year - f.year)
		t.mon = 0
	case t.mon != f.mon:
		cmp = sign(t.mon - f.mon)
		t.mday = 1
	case t.mday != f.mday:
		cmp = sign(t.mday - f.mday)
		t.hour = 0
	case t.hour != f.hour:
		cmp = sign(t.hour - f.hour)
		t.min = 0
	case t.min != f.min:
		cmp = sign(t.min - f.min)
		t.sec = 0
	default:
		cmp = sign(t.sec - f.sec)
	}
	if cmp < 0 {
		return -1
	}
	if cmp > 0 {
		// The reset time keeps f's daylight-saving flag (unknown), not
		// the normalized one's: after Lord Howe's 30-minute gap, 02:00
		// with "daylight time" would be read back as 01:30, and systemd
		// 252 resumes at 02:30 instead, as its results show.
		t.isdst = f.isdst
		*f = t
		return 0
	}
	return 1
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func (c *clock) matchesWeekday(bits int, f *tm) bool {
	if bits < 0 {
		return true
	}
	t := *f
	if !c.mktimeOK(&t) {
		return false
	}
	k := t.wday - 1
	if t.wday == 0 {
		k = 6
	}
	return bits&(1<<k) != 0
}

// findNext is systemd's find_next (src/shared/calendarspec.c): starting
// from f and usec, it moves each field in turn to its next match, from the
// year down to the microsecond, normalizing through mktime after each step
// so that wall times the zone skips are skipped. It reports false when the
// expression elapses no more.
func (e *Expr) findNext(cl *clock, f *tm, usec *int) bool {
	c := *f
	us := *usec
	resetFrom := func(hour bool) {
		if hour {
			c.hour = 0
		}
		c.min, c.sec, us = 0, 0, 0
	}
	for range maxIterations {
		cl.mktime(&c) // normalize; a failure leaves c as it was
		c.isdst = e.dst

		r := e.match(cl, e.year, false, maxYear, &c, &c.year)
		if r > 0 {
			c.mon, c.mday = 0, 1
			resetFrom(true)
		}
		if r < 0 || cl.withinBounds(&c) <= 0 {
			return false
		}

		c.mon++
		r = e.match(cl, e.month, false, 12, &c, &c.mon)
		c.mon--
		if r > 0 {
			c.mday = 1
			resetFrom(true)
		}
		if r >= 0 {
			r = cl.withinBounds(&c)
		}
		if r < 0 {
			c.year++
			c.mon, c.mday = 0, 1
			resetFrom(true)
			continue
		}
		if r == 0 {
			continue
		}

		r = e.match(cl, e.day, e.endOfMonth, 31, &c, &c.mday)
		if r > 0 {
			resetFrom(true)
		}
		if r >= 0 {
			r = cl.withinBounds(&c)
		}
		if r < 0 {
			c.mon++
			c.mday = 1
			resetFrom(true)
			continue
		}
		if r == 0 {
			continue
		}

		if !cl.matchesWeekday(e.weekdays, &c) {
			c.mday++
			resetFrom(true)
			continue
		}

		r = e.match(cl, e.hour, false, 23, &c, &c.hour)
		if r > 0 {
			resetFrom(false)
		}
		if r >= 0 {
			r = cl.withinBounds(&c)
		}
		if r < 0 {
			c.mday++
			resetFrom(true)
			continue
		}
		if r == 0 {
			// The hour just set may not exist on this day (a
			// daylight-saving gap): start again from the normalized time.
			continue
		}

		r = e.match(cl, e.minute, false, 59, &c, &c.min)
		if r > 0 {
			c.sec, us = 0, 0
		}
		if r >= 0 {
			r = cl.withinBounds(&c)
		}
		if r < 0 {
			c.hour++
			c.min, c.sec, us = 0, 0, 0
			continue
		}
		if r == 0 {
			continue
		}

		c.sec = c.sec*usecPerSec + us
		r = e.match(cl, e.usec, false, 60*usecPerSec-1, &c, &c.sec)
		us = c.sec % usecPerSec
		c.sec /= usecPerSec
		if r >= 0 {
			r = cl.withinBounds(&c)
		}
		if r < 0 {
			c.min++
			c.sec, us = 0, 0
			continue
		}
		if r == 0 {
			continue
		}

		*f = c
		*usec = us
		return true
	}
	return false
}

// nextUsec is systemd's calendar_spec_next_usec: the first elapse strictly
// after usec microseconds since the epoch.
func (e *Expr) nextUsec(usec int64) (int64, bool) {
	usec++
	secs := usec / usecPerSec
	us := int(usec % usecPerSec)
	cl := &clock{loc: e.loc}
	f := cl.localtime(secs)
	cl.guess = int64(offsetAt(secs, e.loc))
	if !e.findNext(cl, &f, &us) {
		return 0, false
	}
	u, ok := cl.mktime(&f)
	if !ok || u < 0 {
		return 0, false
	}
	return u*usecPerSec + int64(us), true
}

func offsetAt(u int64, loc *time.Location) int {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return off
}

// searchLimit is past the last year an expression can match (maxYear), so
// that Next and Prev never convert instants that overflow.
var searchLimit = time.Date(maxYear+1, 1, 1, 0, 0, 0, 0, time.UTC)

// SystemdNext is systemd's calendar_spec_next_usec: the first elapse
// strictly after t, in the expression's zone, or the zero time when there
// is none. It is what systemd-analyze calendar --base-time=t prints, and
// what a timer computes from its last trigger (or its start) t. From an
// instant that is not an elapse of the timer, it can name a time that a
// timer running for a while never reaches; see [Expr.Next].
func (e *Expr) SystemdNext(t time.Time) time.Time {
	if !t.Before(searchLimit) {
		return time.Time{}
	}
	us := int64(-1) // before 1970: the search starts at the epoch
	if t.Unix() >= 0 {
		us = t.UnixMicro()
	}
	n, ok := e.nextUsec(us)
	if !ok {
		return time.Time{}
	}
	return time.UnixMicro(n).In(e.loc)
}

// Next returns the first elapse strictly after t of a timer that has been
// running for a while, in the expression's zone, or the zero time when
// there is none.
//
// A timer computes each elapse from the one before (its last trigger), so
// its elapses are a chain, and [Expr.SystemdNext] from an arbitrary
// instant is not always on it. In the autumn, *-*-* 01:59:59 in
// America/New_York elapses at 01:59:59 EDT on 2026-11-01, and systemd's
// next elapse from there is 01:59:59 EST on 2026-11-02: the repeated
// reading is never reached. Yet SystemdNext from 01:00 EST on 2026-11-01,
// an hour later, is 01:59:59 EST that day. Next follows the chain from
// elapses before t (see [cron.Orbit]), so a monitor expects only what the
// timer will do.
func (e *Expr) Next(t time.Time) time.Time {
	if !t.Before(searchLimit) {
		return time.Time{}
	}
	return e.orbit().Next(t)
}

// Prev returns the last elapse strictly before t of a timer that has been
// running for a while (the chain that [Expr.Next] follows), or the zero
// time when there is none within [cron.OrbitSpan].
func (e *Expr) Prev(t time.Time) time.Time {
	if t.After(searchLimit) {
		t = searchLimit
	}
	return e.orbit().Prev(t)
}

func (e *Expr) orbit() cron.Orbit { return cron.Orbit{NextFunc: e.SystemdNext, Start: e.chainStart} }

// chainStart returns an instant at or before t from which SystemdNext is
// on the chain of a running timer: t, unless t is within detour of a
// change of offset (or inside the hour that repeats), and then just before
// the change (before the repeated hour's first pass). From there the chain
// is the one a timer running across the change follows, and a search
// started after the change can differ from it: in the second pass of a
// repeated hour, systemd elapses through the hour again
// (*-*-* *:00/15:00 in America/New_York from 01:10 EST elapses at 01:15,
// 01:30 and 01:45 EST, which a timer that elapsed at 01:45 EDT never does:
// it goes on at 02:00 EST); after a gap, the first elapse of a running
// timer can be later than the gap's end (*:*:0/30 in Pacific/Chatham goes
// from 02:44:30 to 04:00:00, while from 03:50 it elapses at 03:50:30).
func (e *Expr) chainStart(t time.Time) time.Time {
	start, _ := t.In(e.loc).ZoneBounds()
	if start.IsZero() {
		return t
	}
	_, before := start.Add(-time.Second).In(e.loc).Zone()
	_, after := start.In(e.loc).Zone()
	if before == after {
		return t
	}
	back := max(time.Duration(before-after)*time.Second, 0)
	if t.Before(start.Add(back + detour)) {
		return start.Add(-back - time.Second)
	}
	return t
}

// detour bounds how long after a change of offset (after the second pass,
// in autumn) a search from an arbitrary instant can name elapses that a
// running timer does not: a timer whose next elapse fell into a gap
// resumes, at the latest, at the next full hour after the gap's end (its
// search resets the minutes when it normalizes the hour), so a search from
// later than that finds the same elapses.
const detour = time.Hour
