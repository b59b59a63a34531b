package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// listMonitors answers GET /api/v1/monitors.
func (h *Handler) listMonitors(c echo.Context, rq *request) error {
	limit, offset, err := page(c, PageSizeMax)
	if err != nil {
		return err
	}
	p := &monitors.MonitorListParams{ProjectID: rq.key.ProjectID, Tag: c.QueryParam("tag"),
		Source: c.QueryParam("source"), Now: h.now(), Limit: limit + 1, Offset: offset}
	for _, v := range c.QueryParams()["status"] {
		for _, s := range strings.Split(v, ",") {
			st, err := monitors.ParseStatus(strings.TrimSpace(s))
			if err != nil {
				return err
			}
			p.Statuses = append(p.Statuses, st)
		}
	}
	ms, err := h.store.MonitorList(c.Request().Context(), p)
	if err != nil {
		return err
	}
	more := len(ms) > limit
	ms = ms[:min(len(ms), limit)]
	out, err := h.renderMonitors(c, rq, ms, nil)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, MonitorList{Monitors: out, Next: nextLink(c, more, map[string]string{
		"limit": itoa(limit), "offset": itoa(offset + limit)})})
}

// getMonitor answers GET /api/v1/monitors/{id}.
func (h *Handler) getMonitor(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	m, err := h.store.MonitorGet(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if err != nil {
		return err
	}
	return h.respondMonitor(c, rq, http.StatusOK, m, nil)
}

// createMonitor answers POST /api/v1/monitors.
func (h *Handler) createMonitor(c echo.Context, rq *request) error {
	var in MonitorCreate
	obj, err := h.decodeBody(c, &in, readOnlyFields(Monitor{}, MonitorCreate{}))
	if err != nil {
		return err
	}
	if in.Name == nil && in.Slug == nil {
		return invalidf("name", "is required (or give a slug)")
	}
	now := h.now()
	m := newMonitor(rq.key.ProjectID)
	m.ID, m.PingKey, m.CreatedAt, m.UpdatedAt = keys.NewID(), keys.NewPingKey(), now, now
	if _, err := applyFields(m, &in.MonitorFields, obj, ""); err != nil {
		return err
	}
	m.Paused = in.Paused != nil && *in.Paused
	finishNew(m)
	if err := validateMonitor(m, ""); err != nil {
		return err
	}
	if err := h.checkChannels(c.Request().Context(), rq, m.Channels, "channels"); err != nil {
		return err
	}
	if err := h.manage.MonitorCreate(c.Request().Context(), m); err != nil {
		if errors.Is(err, monitors.ErrConflict) {
			return conflictf("slug", "%q is already used by another monitor of this project", m.Slug)
		}
		return err
	}
	return h.respondMonitor(c, rq, http.StatusCreated, m, nil)
}

// patchMonitor answers PATCH /api/v1/monitors/{id}. The settings it sets
// become person fields, which a declaration of the monitor's source then
// leaves alone.
func (h *Handler) patchMonitor(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	var in MonitorUpdate
	obj, err := h.decodeBody(c, &in, readOnlyFields(Monitor{}, MonitorUpdate{}))
	if err != nil {
		return err
	}
	if in.PersonFields != nil {
		if err := checkPersonFields(*in.PersonFields); err != nil {
			return err
		}
	}
	if in.Source != nil {
		if err := checkSource(*in.Source, "source"); err != nil {
			return err
		}
	}
	if in.Channels != nil {
		if err := h.checkChannels(c.Request().Context(), rq, *in.Channels, "channels"); err != nil {
			return err
		}
	}
	m, fields, err := h.manage.MonitorChange(c.Request().Context(), &manage.MonitorChange{
		ProjectID: rq.key.ProjectID, ID: id, Paused: in.Paused, Source: in.Source, PersonFields: in.PersonFields,
		Apply: func(m *monitors.Monitor) ([]string, error) { return applyFields(m, &in.MonitorFields, obj, "") },
	})
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if errors.Is(err, monitors.ErrConflict) && in.Slug != nil {
		return conflictf("slug", "%q is already used by another monitor of this project", *in.Slug)
	}
	if err != nil {
		return err
	}
	return h.respondMonitor(c, rq, http.StatusOK, m, fields)
}

// deleteMonitor answers DELETE /api/v1/monitors/{id}.
func (h *Handler) deleteMonitor(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	err := h.manage.MonitorDelete(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// pauseMonitor answers POST /api/v1/monitors/{id}/pause.
func (h *Handler) pauseMonitor(c echo.Context, rq *request) error { return h.setPaused(c, rq, true) }

// resumeMonitor answers POST /api/v1/monitors/{id}/resume.
func (h *Handler) resumeMonitor(c echo.Context, rq *request) error { return h.setPaused(c, rq, false) }

// setPaused pauses or resumes a monitor as a person: a paused monitor that
// a person paused stays paused when its source declares it again.
func (h *Handler) setPaused(c echo.Context, rq *request, paused bool) error {
	id := pathParam(c, "id")
	m, fields, err := h.manage.MonitorSetPaused(c.Request().Context(), rq.key.ProjectID, id, paused)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if err != nil {
		return err
	}
	return h.respondMonitor(c, rq, http.StatusOK, m, fields)
}

// snoozeMonitor answers POST /api/v1/monitors/{id}/snooze.
func (h *Handler) snoozeMonitor(c echo.Context, rq *request) error {
	var in MonitorSnooze
	if _, err := h.decodeBody(c, &in, nil); err != nil {
		return err
	}
	z := &manage.Snooze{Seconds: in.Seconds}
	if in.Until != nil {
		t, err := time.Parse(time.RFC3339, *in.Until)
		if err != nil {
			return invalidf("until", "must be an RFC 3339 time, such as 2026-03-02T15:04:05Z")
		}
		z.Until = &t
	}
	id := pathParam(c, "id")
	m, err := h.manage.MonitorSnooze(c.Request().Context(), rq.key.ProjectID, id, z)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if err != nil {
		return err
	}
	return h.respondMonitor(c, rq, http.StatusOK, m, nil)
}

// unsnoozeMonitor answers DELETE /api/v1/monitors/{id}/snooze.
func (h *Handler) unsnoozeMonitor(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	m, err := h.manage.MonitorUnsnooze(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if err != nil {
		return err
	}
	return h.respondMonitor(c, rq, http.StatusOK, m, nil)
}

// checkChannels checks that every ID names a channel of the request's
// project.
func (h *Handler) checkChannels(ctx context.Context, rq *request, ids []string, field string) error {
	if len(ids) == 0 {
		return nil
	}
	if rq.channels == nil {
		chs, err := h.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: rq.key.ProjectID})
		if err != nil {
			return err
		}
		rq.channels = make(map[string]bool, len(chs))
		for _, ch := range chs {
			rq.channels[ch.ID] = true
		}
	}
	for _, id := range ids {
		if !rq.channels[id] {
			return invalidf(field, "no channel %q in this project", id)
		}
	}
	return nil
}

// respondMonitor answers one monitor. fields nil loads its person fields.
func (h *Handler) respondMonitor(c echo.Context, rq *request, status int, m *monitors.Monitor, fields []string) error {
	var pf map[string][]string
	if fields != nil {
		pf = map[string][]string{m.ID: fields}
	}
	out, err := h.renderMonitors(c, rq, []*monitors.Monitor{m}, pf)
	if err != nil {
		return err
	}
	return c.JSON(status, out[0])
}

// renderMonitors turns monitors into their JSON form. pf, when nil, is
// loaded from the store.
func (h *Handler) renderMonitors(c echo.Context, rq *request, ms []*monitors.Monitor, pf map[string][]string) ([]Monitor, error) {
	ctx := c.Request().Context()
	out := make([]Monitor, 0, len(ms))
	if len(ms) == 0 {
		return out, nil
	}
	prj, err := h.project(c, rq)
	if err != nil {
		return nil, err
	}
	if pf == nil {
		ids := make([]string, len(ms))
		for i, m := range ms {
			ids[i] = m.ID
		}
		if pf, err = h.store.MonitorPersonFields(ctx, prj.ID, ids); err != nil {
			return nil, err
		}
	}
	badgeKey, err := h.badgeKey(c, rq)
	if err != nil {
		return nil, err
	}
	windows, err := h.store.MaintenanceWindowList(ctx, prj.ID)
	if err != nil {
		return nil, err
	}
	now := h.now()
	for _, m := range ms {
		j := h.monitorJSON(m, pf[m.ID], prj, badgeKey, now)
		if m.State.IsFlapping() {
			f := m.State.Flapping.UTC()
			j.FlappingSince = &f
		}
		if until := monitors.InMaintenanceUntil(windows, m, now); until != nil {
			u := until.UTC()
			j.InMaintenance, j.InMaintenanceUntil = true, &u
		}
		if rq.key.ReadOnly {
			j.hidePingKeys()
		}
		out = append(out, j)
	}
	return out, nil
}

// hidePingKeys takes the ping key and the URLs made of it (or of the
// project ping key) out of m, for a read-only API key: they let whoever
// holds them report runs, hide failures and create monitors. unique_key
// stays to tell monitors apart.
func (m *Monitor) hidePingKeys() {
	m.PingKey, m.PingURL, m.PingURLs = "", "", PingURLs{}
}

// scheduleJSON is the JSON form of spec, its defaults filled in.
func scheduleJSON(spec monitors.ScheduleSpec) Schedule {
	spec = spec.WithDefaults()
	return Schedule{Kind: string(spec.Kind), Expr: spec.Expr, TZ: spec.TZ, EverySeconds: spec.EverySeconds,
		Dialect: string(spec.Dialect)}
}

// monitorJSON is the JSON form of m.
func (h *Handler) monitorJSON(m *monitors.Monitor, personFields []string, prj *monitors.Project, badgeKey string, now time.Time) Monitor {
	byKey := h.baseURL + "/ping/" + m.PingKey
	out := Monitor{
		ID: m.ID, Name: m.Name, Slug: m.Slug, Description: m.Description, Tags: nonNil(m.Tags),
		Schedule:     scheduleJSON(m.Schedule),
		GraceSeconds: m.GraceSeconds, MaxRuntimeSeconds: m.MaxRuntimeSeconds, DeadlineSeconds: m.DeadlineSeconds,
		AlertOnFailure: string(m.AlertOnFailure), FailureThreshold: m.FailureThreshold,
		RecoveryThreshold: m.RecoveryThreshold, Overlap: string(m.Overlap), Channels: nonNil(m.Channels),
		MinRuntimeSeconds: m.MinRuntimeSeconds, EarlySeconds: m.EarlySeconds, TooOften: string(m.TooOften),
		NotifyOutput: !m.HideOutput,
		Status:       string(m.StatusAt(now)), Paused: m.Paused, Source: m.Source, Discovered: m.Discovered,
		PingKey: m.PingKey, PingURL: byKey, UniqueKey: keys.UniqueKey(m.ID),
		PingURLs: PingURLs{ByKey: byKey, BySlug: h.baseURL + "/ping/" + prj.PingKey + "/" + m.Slug,
			Start: byKey + "/start", Fail: byKey + "/fail", Log: byKey + "/log", Skip: byKey + "/skip", Cancel: byKey + "/cancel"},
		OpenIncidents: []OpenIncident{},
		PersonFields:  mergeFields(personFields),
		Warnings:      []string{},
		Badge:         h.badgeURLs(prj.ID, badgeKey, monitorTarget(m.ID)),
		DependsOn:     nonNil(m.DependsOn),
		CreatedAt:     m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC(),
	}
	if p := m.RetryPolicy; p != nil {
		out.RetryPolicy = &RetryPolicy{Name: p.Name, MaxRetries: p.MaxRetries, MaxDelaysSeconds: nonNilInts(p.MaxDelaysSeconds)}
	}
	if m.Snoozed(now) {
		out.SnoozedUntil = utcPtr(m.SnoozedUntil)
	}
	if t := m.State.LastPingAt; !t.IsZero() {
		t = t.UTC()
		out.LastPingAt = &t
	}
	if t := m.State.Expected; !t.IsZero() && !m.Paused {
		t = t.UTC()
		out.NextExpectedAt = &t
	}
	for _, k := range monitors.IncidentKinds {
		if at, ok := m.State.Open[k]; ok {
			oi := OpenIncident{Kind: string(k), OpenedAt: at.UTC(), State: string(monitors.IncidentStateOpen)}
			if h, held := m.State.Held[k]; held {
				oi.Held = true
				if h.Parent != "" {
					oi.State = string(monitors.IncidentStateSuppressed)
				}
			}
			out.OpenIncidents = append(out.OpenIncidents, oi)
		}
	}
	out.RetryChainSeconds, out.Warnings = h.advise(m, now)
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilInts(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}
