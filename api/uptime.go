package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/monitors"
)

// IncidentTally counts a kind's incidents in a span.
type IncidentTally struct {
	Count           int   `json:"count" doc:"incidents opened in the span"`
	DurationSeconds int64 `json:"duration_seconds" doc:"time incidents of this kind were open in the span (until now when still open)"`
}

// UptimeStats are the numbers of a day or a window.
type UptimeStats struct {
	Start       time.Time `json:"start" doc:"local midnight that starts the span, in the monitor's zone"`
	End         time.Time `json:"end" doc:"local midnight that ends it (exclusive); a daylight saving day lasts 23 or 25 hours"`
	Occurrences int       `json:"occurrences"`
	OnTime      int       `json:"on_time" doc:"occurrences that succeeded on time"`
	Uptime      *float64  `json:"uptime" doc:"on_time / occurrences, null without occurrences"`
	// Incidents are by kind, every kind present.
	Incidents map[string]IncidentTally `json:"incidents"`
	Runs      int                      `json:"runs" doc:"successful runs with a duration"`
	RunP50MS  *int64                   `json:"run_p50_ms" doc:"null without runs"`
	RunP95MS  *int64                   `json:"run_p95_ms" doc:"null without runs"`
}

// UptimeDay is one local day.
type UptimeDay struct {
	Date string `json:"date" doc:"YYYY-MM-DD in the monitor's zone"`
	UptimeStats
}

// UptimeWindow sums the last days, today included.
type UptimeWindow struct {
	Days int `json:"days"`
	UptimeStats
}

// Uptime is a monitor's uptime.
type Uptime struct {
	MonitorID string         `json:"monitor_id"`
	TZ        string         `json:"tz"`
	At        time.Time      `json:"at" doc:"the time it was computed at"`
	Days      []UptimeDay    `json:"days" doc:"oldest first, today last"`
	Windows   []UptimeWindow `json:"windows" doc:"the last 7, 30 and 90 days"`
}

func uptimeStats(s *monitors.UptimeStats) UptimeStats {
	out := UptimeStats{Start: s.Start, End: s.End, Occurrences: s.Occurrences, OnTime: s.OnTime,
		Incidents: make(map[string]IncidentTally, len(monitors.IncidentKinds)), Runs: s.Runs}
	if r, ok := s.Ratio(); ok {
		out.Uptime = &r
	}
	for _, k := range monitors.IncidentKinds {
		t := s.Incidents[k]
		out.Incidents[string(k)] = IncidentTally{Count: t.Count, DurationSeconds: int64(t.Duration / time.Second)}
	}
	if s.Runs > 0 {
		p50, p95 := s.RunP50.Milliseconds(), s.RunP95.Milliseconds()
		out.RunP50MS, out.RunP95MS = &p50, &p95
	}
	return out
}

// getUptime answers GET /api/v1/monitors/{id}/uptime.
func (h *Handler) getUptime(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	days := monitors.UptimeDaysMax
	if v := c.QueryParam("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || monitors.ValidateUptimeDays(n) != nil {
			return invalidf("days", "must be a whole number from 1 to %d", monitors.UptimeDaysMax)
		}
		days = n
	}
	ctx := c.Request().Context()
	m, err := h.store.MonitorGet(ctx, rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if err != nil {
		return err
	}
	u, err := monitors.LoadUptime(ctx, h.store, m, h.now(), days)
	if err != nil {
		return err
	}
	out := Uptime{MonitorID: m.ID, TZ: u.Zone.String(), At: u.Now.UTC(), Days: make([]UptimeDay, 0, len(u.Days))}
	for i := range u.Days {
		out.Days = append(out.Days, UptimeDay{Date: u.Days[i].Date, UptimeStats: uptimeStats(&u.Days[i].UptimeStats)})
	}
	for i := range u.Windows {
		out.Windows = append(out.Windows, UptimeWindow{Days: u.Windows[i].Days, UptimeStats: uptimeStats(&u.Windows[i].UptimeStats)})
	}
	return c.JSON(http.StatusOK, out)
}
