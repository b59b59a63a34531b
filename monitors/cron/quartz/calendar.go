package quartz

import "time"

// calendar is the part of java.util.GregorianCalendar that Quartz's
// CronExpression.getTimeAfter uses: lenient fields in a time zone, set one
// at a time and normalized through an instant when one is read.
//
// Reading a wall time that a zone skips or repeats resolves it as Java
// does (sun.util.calendar.ZoneInfo.getOffsetsByWall): a wall time takes the
// offset of the last transition whose new wall time it has reached. So
// 02:30 in New York's spring gap is 02:30 EST (03:30 EDT), and 01:30 in
// the repeated hour of November is 01:30 EST, the second one.
type calendar struct {
	loc   *time.Location
	f     [6]int // year, month (1-12), day, hour, minute, second
	dirty bool
}

const (
	fYear = iota
	fMonth
	fDay
	fHour
	fMinute
	fSecond
)

// newCalendar is Quartz's cl.setTime(t) followed by cl.set(MILLISECOND, 0):
// from then on the instant is the one of the wall-clock fields, so a time
// in the first of two repeated hours reads as the second.
func newCalendar(t time.Time, loc *time.Location) *calendar {
	c := &calendar{loc: loc}
	c.setTime(t)
	c.dirty = true
	return c
}

func (c *calendar) setTime(t time.Time) {
	t = t.In(c.loc)
	c.f = [6]int{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second()}
	c.dirty = false
}

func (c *calendar) set(field, v int) {
	c.f[field] = v
	c.dirty = true
}

func (c *calendar) get(field int) int {
	if c.dirty {
		c.setTime(c.time())
	}
	return c.f[field]
}

// weekday returns Java's DAY_OF_WEEK: 1 is Sunday, 7 Saturday.
func (c *calendar) weekday() int {
	if c.dirty {
		c.setTime(c.time())
	}
	return int(time.Date(c.f[fYear], time.Month(c.f[fMonth]), c.f[fDay], 0, 0, 0, 0, time.UTC).Weekday()) + 1
}

// time returns the instant of the fields. Out-of-range fields carry over as
// in a lenient Calendar, and as in time.Date.
func (c *calendar) time() time.Time {
	wall := time.Date(c.f[fYear], time.Month(c.f[fMonth]), c.f[fDay], c.f[fHour], c.f[fMinute], c.f[fSecond], 0, time.UTC).Unix()
	return time.Unix(wall-int64(offsetByWall(wall, c.loc)), 0).In(c.loc)
}

// offsetByWall returns the offset Java gives the wall time wall (seconds
// of a UTC clock reading the zone's wall time): that of the last zone
// period whose first wall time (its start plus its offset) is at or before
// wall.
func offsetByWall(wall int64, loc *time.Location) int {
	// Most wall times are in a period with no transition near: the period
	// of the instant the wall time would be at its own offset is the one
	// when its wall-clock span holds wall.
	_, off := time.Unix(wall, 0).In(loc).Zone()
	u := time.Unix(wall-int64(off), 0).In(loc)
	_, off = u.Zone()
	start, end := u.ZoneBounds()
	if (start.IsZero() || start.Unix()+int64(off) <= wall) && (end.IsZero() || end.Unix()-14*3600 > wall) {
		return off
	}
	return offsetByWallSlow(wall, loc)
}

func offsetByWallSlow(wall int64, loc *time.Location) int {
	const slack = 27 * 3600 // more than any offset
	t := time.Unix(wall-slack, 0).In(loc)
	_, off := t.Zone()
	for {
		_, end := t.ZoneBounds()
		if end.IsZero() || end.Unix() > wall+slack {
			return off
		}
		_, next := end.Zone()
		if end.Unix()+int64(next) <= wall {
			off = next
		}
		t = end
	}
}
