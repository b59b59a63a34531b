package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/monitors"
)

// historyPage reads ?limit and ?before, the cursor of pings and runs.
func historyPage(c echo.Context) (limit int, before int64, err error) {
	limit, _, err = page(c, PageSizeMax)
	if err != nil {
		return 0, 0, err
	}
	if c.QueryParam("offset") != "" {
		return 0, 0, invalidf("offset", "is not used here: pages of history follow ?before=<next_cursor>")
	}
	if v := c.QueryParam("before"); v != "" {
		before, err = strconv.ParseInt(v, 10, 64)
		if err != nil || before < 1 {
			return 0, 0, invalidf("before", "must be a cursor from next_cursor (a whole number, 1 or more)")
		}
	}
	return limit, before, nil
}

// listPings answers GET /api/v1/monitors/{id}/pings.
func (h *Handler) listPings(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	limit, before, err := historyPage(c)
	if err != nil {
		return err
	}
	ps, err := h.store.PingList(c.Request().Context(), &monitors.HistoryListParams{
		ProjectID: rq.key.ProjectID, MonitorID: id, Limit: limit + 1, Before: before})
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if err != nil {
		return err
	}
	out := PingList{Pings: make([]Ping, 0, min(len(ps), limit))}
	for _, p := range ps[:min(len(ps), limit)] {
		out.Pings = append(out.Pings, Ping{ID: p.ID, Kind: string(p.Kind), At: p.At.UTC(), RID: p.RID, Attempt: p.Attempt,
			RetryAt: utcPtr(p.RetryAt), ScheduledAt: utcPtr(p.ScheduledAt), ExitCode: p.ExitCode, DurationMS: p.DurationMS, Body: p.Body,
			BodyTruncated: p.BodyTruncated, RemoteAddr: p.RemoteAddr, UserAgent: p.UserAgent})
	}
	if len(ps) > limit {
		cursor := strconv.FormatInt(ps[limit-1].ID, 10)
		out.NextCursor = &cursor
		out.Next = nextLink(c, true, map[string]string{"limit": itoa(limit), "before": cursor})
	}
	return c.JSON(http.StatusOK, out)
}

// listRuns answers GET /api/v1/monitors/{id}/runs.
func (h *Handler) listRuns(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	limit, before, err := historyPage(c)
	if err != nil {
		return err
	}
	runs, err := h.store.RunList(c.Request().Context(), &monitors.HistoryListParams{
		ProjectID: rq.key.ProjectID, MonitorID: id, Limit: limit + 1, Before: before})
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if err != nil {
		return err
	}
	out := RunList{Runs: make([]Run, 0, min(len(runs), limit))}
	for _, r := range runs[:min(len(runs), limit)] {
		run := Run{Seq: r.Seq, RID: r.RID, StartedAt: utcPtr(r.StartedAt), FinishedAt: utcPtr(r.FinishedAt),
			DurationMS: r.DurationMS, Attempt: r.Attempt, ExitCode: r.ExitCode, WillRetry: r.WillRetry, Stuck: r.Stuck}
		if r.Outcome != "" {
			o := string(r.Outcome)
			run.Outcome = &o
		}
		out.Runs = append(out.Runs, run)
	}
	if len(runs) > limit {
		cursor := strconv.FormatInt(runs[limit-1].Seq, 10)
		out.NextCursor = &cursor
		out.Next = nextLink(c, true, map[string]string{"limit": itoa(limit), "before": cursor})
	}
	return c.JSON(http.StatusOK, out)
}

// listMonitorIncidents answers GET /api/v1/monitors/{id}/incidents.
func (h *Handler) listMonitorIncidents(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	limit, offset, err := page(c, IncidentPageSizeMax)
	if err != nil {
		return err
	}
	return h.respondIncidents(c, rq, &monitors.IncidentListParams{ProjectID: rq.key.ProjectID, MonitorID: id,
		Limit: limit + 1, Offset: offset}, limit, offset)
}

// listIncidents answers GET /api/v1/incidents.
func (h *Handler) listIncidents(c echo.Context, rq *request) error {
	limit, offset, err := page(c, IncidentPageSizeMax)
	if err != nil {
		return err
	}
	p := &monitors.IncidentListParams{ProjectID: rq.key.ProjectID, MonitorID: c.QueryParam("monitor"),
		Limit: limit + 1, Offset: offset}
	if v := c.QueryParam("open"); v != "" {
		if p.OpenOnly, err = strconv.ParseBool(v); err != nil {
			return invalidf("open", "must be true or false")
		}
	}
	if v := c.QueryParam("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return invalidf("since", "must be an RFC 3339 time such as 2026-03-01T00:00:00Z")
		}
		p.Since = &t
	}
	return h.respondIncidents(c, rq, p, limit, offset)
}

// getIncident answers GET /api/v1/incidents/{id}.
func (h *Handler) getIncident(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	in, err := h.store.IncidentGet(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("incident", id)
	}
	if err != nil {
		return err
	}
	out, err := h.renderIncidents(c, rq, []*monitors.Incident{in})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out[0])
}

func (h *Handler) respondIncidents(c echo.Context, rq *request, p *monitors.IncidentListParams, limit, offset int) error {
	ins, err := h.store.IncidentList(c.Request().Context(), p)
	if errors.Is(err, monitors.ErrNotFound) && p.MonitorID != "" {
		return notFound("monitor", p.MonitorID)
	}
	if err != nil {
		return err
	}
	more := len(ins) > limit
	out, err := h.renderIncidents(c, rq, ins[:min(len(ins), limit)])
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, IncidentList{Incidents: out,
		Next: nextLink(c, more, map[string]string{"limit": itoa(limit), "offset": itoa(offset + limit)})})
}

// renderIncidents adds to each incident its monitor, its events and its
// delivery attempts.
func (h *Handler) renderIncidents(c echo.Context, rq *request, ins []*monitors.Incident) ([]Incident, error) {
	ctx := c.Request().Context()
	out := make([]Incident, 0, len(ins))
	ids := make([]string, len(ins))
	for i, in := range ins {
		ids[i] = in.ID
	}
	var deliveries map[string][]monitors.DeliveryEntry
	if h.deliveries != nil && len(ids) > 0 {
		var err error
		if deliveries, err = h.deliveries.IncidentDeliveries(ctx, rq.key.ProjectID, ids); err != nil {
			return nil, err
		}
	}
	notes, err := h.store.IncidentNoteList(ctx, rq.key.ProjectID, ids)
	if err != nil {
		return nil, err
	}
	mons := map[string]IncidentMonitor{}
	for _, in := range ins {
		mon, ok := mons[in.MonitorID]
		if !ok {
			m, err := h.store.MonitorGet(ctx, rq.key.ProjectID, in.MonitorID)
			if err != nil && !errors.Is(err, monitors.ErrNotFound) {
				return nil, err
			}
			mon = IncidentMonitor{ID: in.MonitorID}
			if m != nil {
				mon.Name, mon.Slug = m.Name, m.Slug
			}
			mons[in.MonitorID] = mon
		}
		evs, err := h.store.IncidentEventList(ctx, &monitors.IncidentEventListParams{ProjectID: rq.key.ProjectID, IncidentID: in.ID})
		if err != nil {
			return nil, err
		}
		j := Incident{ID: in.ID, Kind: string(in.Kind), OpenedAt: in.OpenedAt.UTC(), ResolvedAt: utcPtr(in.ResolvedAt),
			Summary: in.Summary, ResolveSummary: in.ResolveSummary, Monitor: mon,
			State: string(in.State()), Held: in.Held,
			Events: make([]IncidentEvent, 0, len(evs)), Deliveries: apiDeliveries(deliveries[in.ID])}
		if in.SuppressedBy != "" {
			by := in.SuppressedBy
			j.SuppressedBy = &by
		}
		for _, e := range evs {
			j.Events = append(j.Events, IncidentEvent{ID: e.ID, Kind: string(e.Kind), At: e.At.UTC(), Summary: e.Summary})
		}
		if j.Deliveries == nil {
			j.Deliveries = []Delivery{}
		}
		j.Notes = noteJSON(notes[in.ID])
		out = append(out, j)
	}
	return out, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func itoa(n int) string { return strconv.Itoa(n) }

// apiDeliveries are entries of a delivery history as the API shows them.
func apiDeliveries(es []monitors.DeliveryEntry) []Delivery {
	if es == nil {
		return nil
	}
	out := make([]Delivery, len(es))
	for i, e := range es {
		out[i] = Delivery(e)
	}
	return out
}
