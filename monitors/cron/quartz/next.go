package quartz

import (
	"sort"
	"time"

	"github.com/vigilhq/vigil/monitors/cron"
)

// TimeAfter returns the first fire time strictly after t in loc as Quartz
// 2.3.2's CronExpression.getTimeAfter computes it, or the zero Time when
// there is none. It follows Quartz step by step, daylight-saving behaviour
// included: a fire time in a spring gap is moved past the gap and fires
// once, at most, and a repeated wall time fires once, in standard time. The
// vectors in testdata, made by Java Quartz itself, hold it to that.
func (e *Expr) TimeAfter(t time.Time, loc *time.Location) time.Time {
	after := t.Add(time.Second) // Quartz: the time *after* the given time
	cl := newCalendar(after.Truncate(time.Second), loc)
	for {
		if cl.get(fYear) > 2999 {
			return time.Time{}
		}
		sec := cl.get(fSecond)
		mi := cl.get(fMinute)

		// Second.
		if s := next(e.second, sec); s >= 0 {
			sec = s
		} else {
			sec = first(e.second)
			mi++
			cl.set(fMinute, mi)
		}
		cl.set(fSecond, sec)

		// Minute.
		mi = cl.get(fMinute)
		hr := cl.get(fHour)
		tt := -1
		if m := next(e.minute, mi); m >= 0 {
			tt = mi
			mi = m
		} else {
			mi = first(e.minute)
			hr++
		}
		if mi != tt {
			cl.set(fSecond, 0)
			cl.set(fMinute, mi)
			setHour(cl, hr)
			continue
		}
		cl.set(fMinute, mi)

		// Hour.
		hr = cl.get(fHour)
		day := cl.get(fDay)
		tt = -1
		if h := next(e.hour, hr); h >= 0 {
			tt = hr
			hr = h
		} else {
			hr = first(e.hour)
			day++
		}
		if hr != tt {
			cl.set(fSecond, 0)
			cl.set(fMinute, 0)
			cl.set(fDay, day)
			setHour(cl, hr)
			continue
		}
		cl.set(fHour, hr)

		// Day.
		day = cl.get(fDay)
		mon := cl.get(fMonth)
		tt = -1
		tmon := mon
		if !e.domNoSpec { // by day of month
			y := cl.get(fYear)
			switch {
			case e.lastDay && !e.nearestWeekday:
				tt = day
				day = lastDayOfMonth(mon, y) - e.lastDayOffset
				if tt > day {
					mon++
					if mon > 12 {
						mon = 1
						tmon = 3333 // makes the test below fail, as in Quartz
						cl.set(fYear, y+1)
					}
					day = 1
				}
			case e.lastDay: // LW, L-nW
				tt = day
				day = nearestWeekday(lastDayOfMonth(mon, y)-e.lastDayOffset, mon, y)
				if fireTime(loc, y, mon, day, hr, mi, sec).Before(after) {
					day = 1
					mon++
				}
			case e.nearestWeekday: // nW
				tt = day
				day = nearestWeekday(first(e.dom), mon, y)
				if fireTime(loc, y, mon, day, hr, mi, sec).Before(after) {
					day = first(e.dom)
					mon++
				}
			default:
				if d := next(e.dom, day); d >= 0 {
					tt = day
					day = d
					if day > lastDayOfMonth(mon, y) {
						day = first(e.dom)
						mon++
					}
				} else {
					day = first(e.dom)
					mon++
				}
			}
			if day != tt || mon != tmon {
				cl.set(fSecond, 0)
				cl.set(fMinute, 0)
				cl.set(fHour, 0)
				cl.set(fDay, day)
				cl.set(fMonth, mon)
				continue
			}
		} else { // by day of week
			y := cl.get(fYear)
			switch {
			case e.lastDow:
				want := first(e.dow)
				cur := cl.weekday()
				add := daysTo(cur, want)
				last := lastDayOfMonth(mon, y)
				if day+add > last {
					cl.set(fSecond, 0)
					cl.set(fMinute, 0)
					cl.set(fHour, 0)
					cl.set(fDay, 1)
					cl.set(fMonth, mon+1)
					continue
				}
				for day+add+7 <= last {
					add += 7
				}
				day += add
				if add > 0 {
					cl.set(fSecond, 0)
					cl.set(fMinute, 0)
					cl.set(fHour, 0)
					cl.set(fDay, day)
					cl.set(fMonth, mon)
					continue
				}
			case e.nthDow != 0:
				want := first(e.dow)
				cur := cl.weekday()
				add := daysTo(cur, want)
				shifted := add > 0
				day += add
				week := day / 7
				if day%7 > 0 {
					week++
				}
				add = (e.nthDow - week) * 7
				day += add
				if add < 0 || day > lastDayOfMonth(mon, y) {
					cl.set(fSecond, 0)
					cl.set(fMinute, 0)
					cl.set(fHour, 0)
					cl.set(fDay, 1)
					cl.set(fMonth, mon+1)
					continue
				} else if add > 0 || shifted {
					cl.set(fSecond, 0)
					cl.set(fMinute, 0)
					cl.set(fHour, 0)
					cl.set(fDay, day)
					cl.set(fMonth, mon)
					continue
				}
			default:
				cur := cl.weekday()
				want := first(e.dow)
				if d := next(e.dow, cur); d >= 0 {
					want = d
				}
				add := daysTo(cur, want)
				if day+add > lastDayOfMonth(mon, y) {
					cl.set(fSecond, 0)
					cl.set(fMinute, 0)
					cl.set(fHour, 0)
					cl.set(fDay, 1)
					cl.set(fMonth, mon+1)
					continue
				} else if add > 0 {
					cl.set(fSecond, 0)
					cl.set(fMinute, 0)
					cl.set(fHour, 0)
					cl.set(fDay, day+add)
					cl.set(fMonth, mon)
					continue
				}
			}
		}
		cl.set(fDay, day)

		// Month.
		mon = cl.get(fMonth)
		y := cl.get(fYear)
		tt = -1
		if y > MaxYear {
			return time.Time{}
		}
		if m := next(e.month, mon); m >= 0 {
			tt = mon
			mon = m
		} else {
			mon = first(e.month)
			y++
		}
		if mon != tt {
			cl.set(fSecond, 0)
			cl.set(fMinute, 0)
			cl.set(fHour, 0)
			cl.set(fDay, 1)
			cl.set(fMonth, mon)
			cl.set(fYear, y)
			continue
		}
		cl.set(fMonth, mon)

		// Year.
		y = cl.get(fYear)
		tt = -1
		ny, ok := e.nextYear(y)
		if !ok {
			return time.Time{}
		}
		tt, y = y, ny
		if y != tt {
			cl.set(fSecond, 0)
			cl.set(fMinute, 0)
			cl.set(fHour, 0)
			cl.set(fDay, 1)
			cl.set(fMonth, 1)
			cl.set(fYear, y)
			continue
		}
		cl.set(fYear, y)
		return cl.time()
	}
}

// Next returns the first fire time strictly after t of a Quartz trigger
// that has been firing for a while, in loc, or the zero Time when there is
// none. A trigger computes each fire time from the previous one, so Next
// follows that chain (see [cron.Orbit]).
func (e *Expr) Next(t time.Time, loc *time.Location) time.Time {
	return e.orbit(loc).Next(t)
}

// Prev returns the last fire time strictly before t, or the zero Time when
// there is none within [cron.OrbitSpan].
func (e *Expr) Prev(t time.Time, loc *time.Location) time.Time {
	return e.orbit(loc).Prev(t)
}

func (e *Expr) orbit(loc *time.Location) cron.Orbit {
	return cron.Orbit{NextFunc: func(t time.Time) time.Time { return e.TimeAfter(t, loc) }}
}

func (e *Expr) nextYear(y int) (int, bool) {
	if e.years == nil {
		return y, y >= 1970 && y <= MaxYear
	}
	i := sort.SearchInts(e.years, y)
	if i == len(e.years) {
		return 0, false
	}
	return e.years[i], true
}

// setHour is Quartz's setCalendarHour: set the hour, and when daylight
// saving time moved it, the hour after.
func setHour(cl *calendar, h int) {
	cl.set(fHour, h)
	if cl.get(fHour) != h && h != 24 {
		cl.set(fHour, h+1)
	}
}

// daysTo returns the days from weekday cur to weekday want (1-7), 0-6.
func daysTo(cur, want int) int {
	switch {
	case cur < want:
		return want - cur
	case cur > want:
		return want + 7 - cur
	}
	return 0
}

// nearestWeekday moves day to the nearest Monday to Friday within its
// month, as Quartz's W does.
func nearestWeekday(day, mon, y int) int {
	last := lastDayOfMonth(mon, y)
	// Lenient, as Quartz's Calendar: a day beyond the month's end counts on.
	wd := time.Date(y, time.Month(mon), day, 0, 0, 0, 0, time.UTC).Weekday()
	switch {
	case wd == time.Saturday && day == 1:
		day += 2
	case wd == time.Saturday:
		day--
	case wd == time.Sunday && day == last:
		day -= 2
	case wd == time.Sunday:
		day++
	}
	return day
}

// fireTime is Quartz's candidate instant for a W day: the fields set in a
// Calendar of the zone.
func fireTime(loc *time.Location, y, mon, day, hr, mi, sec int) time.Time {
	c := &calendar{loc: loc, f: [6]int{y, mon, day, hr, mi, sec}, dirty: true}
	return c.time()
}

func lastDayOfMonth(mon, y int) int {
	return time.Date(y, time.Month(mon)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
