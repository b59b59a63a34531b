package web

import (
	"context"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// uptimeStripDays is how many days the monitor page's strip shows.
const uptimeStripDays = monitors.UptimeDaysMax

// uptimeCell is one day of the strip.
type uptimeCell struct {
	Date string
	// Class is ok (every occurrence on time, no incident time), warn
	// (some not, at least half on time), bad (fewer than half, or incident
	// time without any occurrence) or none (nothing happened).
	Class string
	Label string // the day's numbers in words, for title and screen readers
}

type uptimeWindowView struct {
	Days  int
	Words string
}

type uptimeView struct {
	Zone    string
	Cells   []uptimeCell
	Windows []uptimeWindowView
	Chart   *durationChart // nil without runs
}

// durationChart draws each day's median and 95th percentile run duration
// as bars, chartDayWidth apart, and the trend line of the medians, in an
// SVG of chartHeight.
type durationChart struct {
	Width, Height float64
	Bars          []durationBar
	Trend         *trendLine
	Max           string // the duration at the top of the scale
	Words         string // the trend in words
}

type durationBar struct {
	X, W, Y50, H50, Y95, H95 float64
	Label                    string
}

type trendLine struct{ X1, Y1, X2, Y2 float64 }

const (
	chartDayWidth = 10.0
	chartHeight   = 100.0
)

// newDurationChart scales u's run durations to the chart.
func newDurationChart(u *monitors.Uptime) *durationChart {
	var top time.Duration
	for i := range u.Days {
		top = max(top, u.Days[i].RunP95)
	}
	if top <= 0 {
		return nil
	}
	y := func(d time.Duration) float64 { return chartHeight * (1 - min(max(float64(d)/float64(top), 0), 1)) }
	c := &durationChart{Width: chartDayWidth * float64(len(u.Days)), Height: chartHeight,
		Max: shortDuration(top), Words: "not enough days with runs for a trend"}
	for i := range u.Days {
		d := &u.Days[i]
		if d.Runs == 0 {
			continue
		}
		runs := fmt.Sprintf("%d runs", d.Runs)
		if d.Runs == 1 {
			runs = "1 run"
		}
		x := float64(i) * chartDayWidth
		c.Bars = append(c.Bars, durationBar{X: x + 1, W: chartDayWidth - 2,
			Y50: y(d.RunP50), H50: chartHeight - y(d.RunP50), Y95: y(d.RunP95), H95: chartHeight - y(d.RunP95),
			Label: fmt.Sprintf("%s: %s, median %s, 95th percentile %s", d.Date, runs, shortDuration(d.RunP50), shortDuration(d.RunP95))})
	}
	if first, perDay, ok := u.RunTrend(); ok {
		// Drawn between the first and the last day with runs only.
		i, j := -1, 0
		for k := range u.Days {
			if u.Days[k].Runs > 0 {
				if i < 0 {
					i = k
				}
				j = k
			}
		}
		at := func(k int) time.Duration { return first + perDay*time.Duration(k) }
		c.Trend = &trendLine{X1: (float64(i) + .5) * chartDayWidth, Y1: y(at(i)),
			X2: (float64(j) + .5) * chartDayWidth, Y2: y(at(j))}
		switch {
		case perDay.Abs() < time.Millisecond:
			c.Words = "median run time steady"
		case perDay > 0:
			c.Words = "median run time grows " + shortDuration(perDay) + " a day"
		default:
			c.Words = "median run time shrinks " + shortDuration(-perDay) + " a day"
		}
	}
	return c
}

// shortDuration writes d to the millisecond under a minute, else to the
// second.
func shortDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// uptimeClass says how a span's numbers look, as one word.
func uptimeClass(s *monitors.UptimeStats) string {
	r, ok := s.Ratio()
	down := s.Down() > 0
	switch {
	case !ok && !down:
		return "none"
	case !ok, r < 0.5:
		return "bad"
	case r < 1, down:
		return "warn"
	}
	return "ok"
}

// uptimeView computes the monitor's 90-day strip and its windows.
func (h *Handler) uptimeView(ctx context.Context, v *viewer, m *monitors.Monitor) (*uptimeView, error) {
	u, err := monitors.LoadUptime(ctx, h.store, m, v.Now, uptimeStripDays)
	if err != nil {
		return nil, fmt.Errorf("uptime of monitor %s: %w", m.ID, err)
	}
	return newUptimeView(u), nil
}

// newUptimeView lays out u as the strip, its windows and the duration
// chart: the one rendering of uptime, which the monitor page and the
// status pages (template "uptime-cells") both show.
func newUptimeView(u *monitors.Uptime) *uptimeView {
	out := &uptimeView{Zone: u.Zone.String()}
	for i := range u.Days {
		d := &u.Days[i]
		out.Cells = append(out.Cells, uptimeCell{Date: d.Date, Class: uptimeClass(&d.UptimeStats),
			Label: d.Date + ": " + d.Words()})
	}
	for i := range u.Windows {
		w := &u.Windows[i]
		out.Windows = append(out.Windows, uptimeWindowView{Days: w.Days, Words: w.Words()})
	}
	out.Chart = newDurationChart(u)
	return out
}
