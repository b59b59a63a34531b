package web

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// When is an instant as a page shows it: in the viewer's zone, and
// relative to now.
type When struct {
	ISO  string // RFC 3339, for <time datetime>
	Text string // "Mon 2 Mar 09:00:05"
	Zone string // the zone's abbreviation, such as CET
	Rel  string // "in 12 min", "3 min ago"
	Full string // with the year and the zone's name, for a tooltip
	Past bool
}

// when formats t for the viewer; nil for the zero time. It notes when
// what it says changes (viewer.changesAt).
func (v *viewer) when(t time.Time) *When {
	if t.IsZero() {
		return nil
	}
	w, until := whenIn(t, v.Loc, v.Now)
	v.changesAt(until)
	return w
}

func (v *viewer) whenPtr(t *time.Time) *When {
	if t == nil {
		return nil
	}
	return v.when(*t)
}

// relative is relative(t, v.Now), noting when it changes.
func (v *viewer) relative(t time.Time) string {
	s, until := relativeSpan(t, v.Now)
	v.changesAt(until)
	return s
}

// changesAt notes that something drawn for the viewer at Now is drawn
// differently from t on: Until is the earliest such instant noted.
func (v *viewer) changesAt(t time.Time) {
	if v.Until.IsZero() || t.Before(v.Until) {
		v.Until = t
	}
}

// whenIn formats t in loc as seen at now, and says until when (after
// now) that stays the same.
func whenIn(t time.Time, loc *time.Location, now time.Time) (*When, time.Time) {
	lt := t.In(loc)
	layout := "Mon 2 Jan 15:04:05"
	ln := now.In(loc)
	if lt.Year() != ln.Year() {
		layout = "Mon 2 Jan 2006 15:04:05"
	}
	zone, _ := lt.Zone()
	rel, until := relativeSpan(t, now)
	if t.After(now) && t.Before(until) {
		until = t // Past
	}
	if ny := time.Date(ln.Year()+1, 1, 1, 0, 0, 0, 0, loc); ny.Before(until) {
		until = ny // the layout, by the year
	}
	return &When{
		ISO:  t.UTC().Format(time.RFC3339),
		Text: lt.Format(layout),
		Zone: zone,
		Rel:  rel,
		Full: lt.Format("Monday 2 January 2006, 15:04:05 MST") + " (" + loc.String() + ")",
		Past: !t.After(now),
	}, until
}

// relative says how far t is from now: "in 12 min", "3 min ago", "just
// now".
func relative(t, now time.Time) string {
	s, _ := relativeSpan(t, now)
	return s
}

// relativeSpan is relative(t, now), and the first instant after now at
// which relative(t, ·) says something else. The text says the distance
// in whole units (a second, a minute, an hour, a day, 30 days: unit), so
// it stays the same while the distance is between the two multiples of
// unit around it; each range of the switch starts and ends on a multiple
// of its unit.
func relativeSpan(t, now time.Time) (string, time.Time) {
	d := t.Sub(now)
	future := d > 0
	if !future {
		d = -d
	}
	if d < 2*time.Second {
		return "just now", t.Add(2 * time.Second)
	}
	var s string
	unit := time.Minute
	switch {
	case d < time.Minute:
		s, unit = fmt.Sprintf("%d s", int(d/time.Second)), time.Second
	case d < time.Hour:
		s = fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 10*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		s = fmt.Sprintf("%d h", h)
		if m > 0 {
			s += fmt.Sprintf(" %d min", m)
		}
	case d < 48*time.Hour:
		s, unit = fmt.Sprintf("%d h", int(d/time.Hour)), time.Hour
	case d < 60*24*time.Hour:
		s, unit = fmt.Sprintf("%d days", int(d/(24*time.Hour))), 24*time.Hour
	default:
		s, unit = fmt.Sprintf("%d months", int(d/(30*24*time.Hour))), 30*24*time.Hour
	}
	lo := d - d%unit
	if future {
		// The same while t-now >= lo.
		return "in " + s, t.Add(-lo + time.Nanosecond)
	}
	// The same while now-t < lo+unit.
	return s + " ago", t.Add(lo + unit)
}

// plainDuration says d in words ([monitors.PlainDuration]).
func plainDuration(d time.Duration) string { return monitors.PlainDuration(d) }

// shortMillis formats a run's duration: "850 ms", "12.4 s", "3m05s".
func shortMillis(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// formDuration writes seconds the way the form reads them back: "90s",
// "5m", "1h30m", "2d".
func formDuration(seconds int64) string {
	if seconds <= 0 {
		return ""
	}
	var b strings.Builder
	for _, u := range []struct {
		s    int64
		unit string
	}{{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}} {
		if n := seconds / u.s; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.unit)
			seconds -= n * u.s
		}
	}
	return b.String()
}

// parseFormDuration reads a duration as people type it: a number of
// seconds ("90"), or units d, h, m and s ("1h30m", "2d", "45s", "1.5h").
// Empty is 0.
func parseFormDuration(s string) (int64, error) {
	s = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("%q is negative", s)
		}
		return n, nil
	}
	var total float64
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, fmt.Errorf("%q is not a duration such as 90s, 5m, 1h30m or 2d", s)
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration such as 90s, 5m, 1h30m or 2d", s)
		}
		var unit float64
		switch rest[i] {
		case 'd':
			unit = 86400
		case 'h':
			unit = 3600
		case 'm':
			unit = 60
		case 's':
			unit = 1
		default:
			return 0, fmt.Errorf("%q is not a duration such as 90s, 5m, 1h30m or 2d", s)
		}
		total += n * unit
		rest = rest[i+1:]
	}
	if total > 10*366*86400 {
		return 0, fmt.Errorf("%q is too long", s)
	}
	return int64(math.Round(total)), nil
}

// scheduleWords says a schedule in plain words, with the zone its times
// are in ([monitors.ScheduleSpec.Words]).
func scheduleWords(spec monitors.ScheduleSpec) (words, zone string) { return spec.Words() }

// sparkline draws the durations of runs (newest first) as a small inline
// SVG: a line of durations, oldest on the left, with failed runs marked.
// The SVG has a text alternative that says the same in words.
func sparkline(runs []monitors.RunBrief) template.HTML {
	const (
		w, h      = 120.0, 28.0
		pad       = 3.0
		maxPoints = 20
	)
	pts := make([]monitors.RunBrief, 0, min(len(runs), maxPoints))
	for _, r := range runs {
		if r.DurationMS != nil && r.Outcome != "" && r.Outcome != monitors.RunSkipped {
			pts = append(pts, r)
		}
		if len(pts) == maxPoints {
			break
		}
	}
	if len(pts) == 0 {
		return template.HTML(`<span class="muted">no runs yet</span>`)
	}
	slices.Reverse(pts)
	var longest int64 = 1
	durs := make([]int64, len(pts))
	failed := 0
	for i, r := range pts {
		durs[i] = *r.DurationMS
		longest = max64(longest, durs[i])
		if r.Outcome == monitors.RunFailed || r.Outcome == monitors.RunAbandoned {
			failed++
		}
	}
	sorted := slices.Clone(durs)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	x := func(i int) float64 {
		if len(pts) == 1 {
			return w / 2
		}
		return pad + float64(i)*(w-2*pad)/float64(len(pts)-1)
	}
	y := func(d int64) float64 { return h - pad - float64(d)/float64(longest)*(h-2*pad) }

	label := "Last " + strconv.Itoa(len(pts)) + " runs: median " + shortMillis(median) + ", longest " + shortMillis(longest)
	if failed > 0 {
		label += ", " + strconv.Itoa(failed) + " failed"
	}
	label = template.HTMLEscapeString(label)
	// Built by appending, not with fmt: every row of the list draws one.
	b := make([]byte, 0, 256+len(pts)*48)
	b = append(b, `<svg class="spark" viewBox="0 0 120 28" width="120" height="28" role="img" aria-label="`...)
	b = append(b, label...)
	b = append(b, `"><title>`...)
	b = append(b, label...)
	b = append(b, `</title><polyline class="spark-line" points="`...)
	point := func(b []byte, i int, d int64, sep byte) []byte {
		b = strconv.AppendFloat(b, x(i), 'f', 1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, y(d), 'f', 1, 64)
		return append(b, sep)
	}
	for i, d := range durs {
		b = point(b, i, d, ' ')
	}
	b = append(b, `"/>`...)
	for i, r := range pts {
		cls := "spark-ok"
		if r.Outcome == monitors.RunFailed || r.Outcome == monitors.RunAbandoned {
			cls = "spark-fail"
		} else if r.Outcome == monitors.RunCancelled {
			cls = "spark-cancel"
		}
		if cls != "spark-ok" || i == len(pts)-1 {
			b = append(b, `<circle class="`...)
			b = append(b, cls...)
			b = append(b, `" cx="`...)
			b = strconv.AppendFloat(b, x(i), 'f', 1, 64)
			b = append(b, `" cy="`...)
			b = strconv.AppendFloat(b, y(durs[i]), 'f', 1, 64)
			b = append(b, `" r="2.6"/>`...)
		}
	}
	b = append(b, `</svg>`...)
	return template.HTML(b) //nolint:gosec // built from numbers and an escaped label
}

// runBriefs is what the sparkline needs of runs.
func runBriefs(runs []*monitors.Run) []monitors.RunBrief {
	out := make([]monitors.RunBrief, len(runs))
	for i, r := range runs {
		out[i] = monitors.RunBrief{Outcome: r.Outcome, DurationMS: r.DurationMS}
	}
	return out
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
