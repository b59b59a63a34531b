package cron

import (
	"math"
	"math/bits"
	"time"
)

const (
	// searchSeconds bounds every search: about 50 years (of 365.2425 days).
	// No expression that Parse accepts goes longer than 40 years between
	// fires (a 29 February on a given weekday), so only a job whose every
	// wall time falls into daylight-saving gaps can come back empty.
	searchSeconds = 50 * 31556952

	// zoneSlack exceeds the largest UTC offset any zone has ever used, so
	// the instant w-zoneSlack surely reads earlier than wall time w.
	zoneSlack = 26 * 3600

	// instantMin and instantMax keep the arithmetic far from overflow.
	instantMin = -(1 << 60)
	instantMax = 1 << 60
)

// Next returns the first instant strictly after after at which the
// expression fires, evaluated in loc (UTC when nil), or the zero Time if it
// does not fire within about 50 years. The result is in loc and has no
// fraction of a second.
//
// Around daylight-saving changes, jobs at a specific time (neither the
// minute nor the hour field starts with *) fire once per wall time: a wall
// time skipped by the change fires at the first instant after the gap, and a
// repeated wall time fires at its first occurrence. Other jobs fire at every
// instant whose local wall time matches. See the package documentation.
func (e *Expr) Next(after time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	n := after.Unix() + 1 // the first whole second strictly after after
	if n < instantMin || n > instantMax {
		return time.Time{}
	}
	var u int64
	var ok bool
	if e.wallClock {
		u, ok = e.nextWallClock(n, loc)
	} else {
		u, ok = e.nextElapsed(n, loc)
	}
	if !ok {
		return time.Time{}
	}
	return time.Unix(u, 0).In(loc)
}

// Prev returns the last instant strictly before before at which the
// expression fires, evaluated in loc (UTC when nil), or the zero Time if it
// did not fire within about 50 years. It enumerates exactly the instants
// Next does, backwards.
func (e *Expr) Prev(before time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	p := before.Unix() // the last whole second strictly before before
	if before.Nanosecond() == 0 {
		p--
	}
	if p < instantMin || p > instantMax {
		return time.Time{}
	}
	var u int64
	var ok bool
	if e.wallClock {
		u, ok = e.prevWallClock(p, loc)
	} else {
		u, ok = e.prevElapsed(p, loc)
	}
	if !ok {
		return time.Time{}
	}
	return time.Unix(u, 0).In(loc)
}

// segment is a stretch of instants [start, end) with one UTC offset.
type segment struct {
	start, end int64 // math.MinInt64 / math.MaxInt64 when unbounded
	offset     int64
}

// segmentAt returns the segment that contains u: start <= u < end.
func segmentAt(u int64, loc *time.Location) segment {
	if loc == time.UTC {
		return segment{start: math.MinInt64, end: math.MaxInt64}
	}
	seg := zoneBounds(u, loc)
	if u < seg.end {
		return seg
	}
	// Beyond a zone's table of transitions, Go derives the bounds from the
	// zone's rule and ends each year after 365 days, so on the last day
	// (UTC) of a leap year the end it reports lies before u (the offset is
	// still right). The segment goes on into the next year, whose bounds
	// are right.
	if next := zoneBounds(u+secondsPerDay, loc); next.offset == seg.offset && next.start <= u+secondsPerDay && next.end > u {
		seg.end = next.end
		return seg
	}
	return segment{start: u, end: u + 1, offset: seg.offset} // valid, if small
}

func zoneBounds(u int64, loc *time.Location) segment {
	t := time.Unix(u, 0).In(loc)
	_, off := t.Zone()
	s, e := t.ZoneBounds()
	seg := segment{start: math.MinInt64, end: math.MaxInt64, offset: int64(off)}
	if !s.IsZero() {
		seg.start = s.Unix()
	}
	if !e.IsZero() {
		seg.end = e.Unix()
	}
	return seg
}

// Elapsed-time jobs fire at every instant whose wall time matches. Walk the
// constant-offset segments, searching each one's wall-time range.

func (e *Expr) nextElapsed(n int64, loc *time.Location) (int64, bool) {
	limit := n + searchSeconds
	for u := n; u < limit; {
		seg := segmentAt(u, loc)
		wallLimit := limit + seg.offset
		if seg.end < limit {
			wallLimit = seg.end + seg.offset
		}
		if w, ok := e.nextWall(u+seg.offset, wallLimit); ok {
			return w - seg.offset, true
		}
		if seg.end >= limit {
			break
		}
		u = seg.end
	}
	return 0, false
}

func (e *Expr) prevElapsed(p int64, loc *time.Location) (int64, bool) {
	lower := p - searchSeconds
	for u := p; u > lower; {
		seg := segmentAt(u, loc)
		wallLower := lower + seg.offset
		if seg.start > lower {
			wallLower = seg.start + seg.offset
		}
		if w, ok := e.prevWall(u+seg.offset, wallLower); ok {
			return w - seg.offset, true
		}
		if seg.start <= lower {
			break
		}
		u = seg.start - 1
	}
	return 0, false
}

// Wall-clock jobs fire once per scheduled wall time W, at inst(W), the
// first instant whose wall time reads W or later. That is W itself when it
// exists once, its first occurrence when the clock is set back over it, and
// the end of the gap when the clock is set forward over it. inst never
// decreases as W grows, so the next fire after n-1 belongs to the first
// scheduled W beyond every wall time read up to n-1, and the previous fire
// at or before p to the last scheduled W not beyond every wall time read up
// to p.

func (e *Expr) nextWallClock(n int64, loc *time.Location) (int64, bool) {
	from := maxWallUpTo(n-1, loc) + 1
	w, ok := e.nextWall(from, from+searchSeconds)
	if !ok {
		return 0, false
	}
	return firstInstantReading(w, loc), true
}

func (e *Expr) prevWallClock(p int64, loc *time.Location) (int64, bool) {
	from := maxWallUpTo(p, loc)
	w, ok := e.prevWall(from, from-searchSeconds)
	if !ok {
		return 0, false
	}
	return firstInstantReading(w, loc), true
}

// maxWallUpTo returns the latest wall time read at any instant up to u. It
// is u's own wall time except just after the clock was set back.
func maxWallUpTo(u int64, loc *time.Location) int64 {
	seg := segmentAt(u, loc)
	best := u + seg.offset
	for i := 0; seg.start > u-zoneSlack && i < 64; i++ {
		q := seg.start - 1 // the last instant of the segment before
		seg = segmentAt(q, loc)
		best = max(best, q+seg.offset)
	}
	return best
}

// firstInstantReading returns the first instant whose wall time is w or
// later: inst(w).
func firstInstantReading(w int64, loc *time.Location) int64 {
	u := w - zoneSlack // reads before w in every zone
	for i := 0; i < 64; i++ {
		seg := segmentAt(u, loc)
		x := max(w-seg.offset, u)
		if x < seg.end {
			return x
		}
		u = seg.end
	}
	// Unreachable with real zone data (64 offset changes within two days);
	// fall back on the plain reading.
	return w - segmentAt(w, loc).offset
}

// nextWall returns the first scheduled wall time in [from, limit).
func (e *Expr) nextWall(from, limit int64) (int64, bool) {
	if from >= limit {
		return 0, false
	}
	day := floorDiv(from, secondsPerDay)
	sod := int(from - day*secondsPerDay)
	y, m, d := civilFromDays(day)
	if e.month&(1<<m) == 0 {
		y, m = e.nextMonth(y, m)
		d, sod = 0, 0
	}
	for {
		first := daysFromCivil(y, m, 1)
		if first*secondsPerDay >= limit {
			return 0, false
		}
		mask := e.dayMaskFor(daysIn(y, m), weekdayOfDays(first)) >> d << d
		for ; mask != 0; mask &= mask - 1 {
			dd := bits.TrailingZeros32(mask)
			start := 0
			if dd == d {
				start = sod
			}
			if tod, ok := e.nextTimeOfDay(start); ok {
				w := (first+int64(dd-1))*secondsPerDay + int64(tod)
				if w >= limit {
					return 0, false
				}
				return w, true
			}
		}
		y, m = e.nextMonth(y, m)
		d, sod = 0, 0
	}
}

// prevWall returns the last scheduled wall time in [lower, from].
func (e *Expr) prevWall(from, lower int64) (int64, bool) {
	if from < lower {
		return 0, false
	}
	day := floorDiv(from, secondsPerDay)
	sod := int(from - day*secondsPerDay)
	y, m, d := civilFromDays(day)
	if e.month&(1<<m) == 0 {
		y, m = e.prevMonth(y, m)
		d, sod = 32, secondsPerDay-1
	}
	for {
		first := daysFromCivil(y, m, 1)
		n := daysIn(y, m)
		if (first+int64(n))*secondsPerDay-1 < lower {
			return 0, false
		}
		mask := e.dayMaskFor(n, weekdayOfDays(first)) & uint32(uint64(2)<<d-1)
		for mask != 0 {
			dd := bits.Len32(mask) - 1
			end := secondsPerDay - 1
			if dd == d {
				end = sod
			}
			if tod, ok := e.prevTimeOfDay(end); ok {
				w := (first+int64(dd-1))*secondsPerDay + int64(tod)
				if w < lower {
					return 0, false
				}
				return w, true
			}
			mask &^= 1 << dd
		}
		y, m = e.prevMonth(y, m)
		d, sod = 32, secondsPerDay-1
	}
}

// nextMonth returns the first selected month after y-m.
func (e *Expr) nextMonth(y int64, m int) (int64, int) {
	if rest := e.month >> (m + 1); rest != 0 {
		return y, m + 1 + bits.TrailingZeros16(rest)
	}
	return y + 1, bits.TrailingZeros16(e.month)
}

// prevMonth returns the last selected month before y-m.
func (e *Expr) prevMonth(y int64, m int) (int64, int) {
	if rest := e.month & (1<<m - 1); rest != 0 {
		return y, bits.Len16(rest) - 1
	}
	return y - 1, bits.Len16(e.month) - 1
}

// nextTimeOfDay returns the first scheduled second of the day at or after
// sod (seconds since midnight).
func (e *Expr) nextTimeOfDay(sod int) (int, bool) {
	h0, m0, s0 := sod/3600, sod/60%60, sod%60
	for h := nextBit(e.hour, h0); h >= 0; h = nextBit(e.hour, h+1) {
		mStart := 0
		if h == h0 {
			mStart = m0
		}
		for mi := nextBit(e.minute, mStart); mi >= 0; mi = nextBit(e.minute, mi+1) {
			sStart := 0
			if h == h0 && mi == m0 {
				sStart = s0
			}
			if s := nextBit(e.second, sStart); s >= 0 {
				return h*3600 + mi*60 + s, true
			}
		}
	}
	return 0, false
}

// prevTimeOfDay returns the last scheduled second of the day at or before
// sod.
func (e *Expr) prevTimeOfDay(sod int) (int, bool) {
	h0, m0, s0 := sod/3600, sod/60%60, sod%60
	for h := prevBit(e.hour, h0); h >= 0; h = prevBit(e.hour, h-1) {
		mEnd := 59
		if h == h0 {
			mEnd = m0
		}
		for mi := prevBit(e.minute, mEnd); mi >= 0; mi = prevBit(e.minute, mi-1) {
			sEnd := 59
			if h == h0 && mi == m0 {
				sEnd = s0
			}
			if s := prevBit(e.second, sEnd); s >= 0 {
				return h*3600 + mi*60 + s, true
			}
		}
	}
	return 0, false
}

// nextBit returns the lowest set bit of mask at position from or above, or
// -1.
func nextBit(mask uint64, from int) int {
	if from >= 64 {
		return -1
	}
	if m := mask >> from; m != 0 {
		return from + bits.TrailingZeros64(m)
	}
	return -1
}

// prevBit returns the highest set bit of mask at position from or below,
// or -1.
func prevBit(mask uint64, from int) int {
	if from < 0 {
		return -1
	}
	if from < 63 {
		mask &= uint64(1)<<(from+1) - 1
	}
	return bits.Len64(mask) - 1
}
