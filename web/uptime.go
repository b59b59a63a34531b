package web

import (
	"context"
	"fmt"

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
	return out, nil
}
