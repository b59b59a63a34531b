package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// windowJSON is the JSON form of w at now.
func windowJSON(w *monitors.MaintenanceWindow, now time.Time) MaintenanceWindow {
	out := MaintenanceWindow{ID: w.ID, Name: w.Name, Monitors: nonNil(w.Monitors), Tags: nonNil(w.Tags), All: w.All,
		DurationSeconds: w.DurationSeconds, CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC()}
	if w.Schedule != nil {
		expr, tz := w.Schedule.Expr, w.Schedule.TZ
		out.Schedule, out.TZ = &expr, &tz
	} else {
		s, e := w.StartsAt.UTC(), w.EndsAt.UTC()
		out.StartsAt, out.EndsAt = &s, &e
	}
	if w.EndedAt != nil {
		e := w.EndedAt.UTC()
		out.EndedAt = &e
	}
	if w.Active(now) {
		p, _ := w.PeriodAt(now)
		e := p.End.UTC()
		out.Active, out.ActiveUntil = true, &e
	}
	if next := w.NextStart(now); next != nil {
		n := next.UTC()
		out.NextStartsAt = &n
	}
	return out
}

// applyWindowFields sets what in carries on w, checking that the monitors
// it names are the project's.
func (h *Handler) applyWindowFields(c echo.Context, rq *request, obj object, in *MaintenanceWindowFields, w *monitors.MaintenanceWindow) error {
	for _, name := range sortedKeys(obj) {
		if obj.isNull(name) {
			return invalidf(name, "must not be null")
		}
	}
	if in.Name != nil {
		w.Name = *in.Name
	}
	if in.Monitors != nil {
		w.Monitors = *in.Monitors
		for i, id := range w.Monitors {
			if _, err := h.store.MonitorGet(c.Request().Context(), rq.key.ProjectID, id); errors.Is(err, monitors.ErrNotFound) {
				return invalidf(fmt.Sprintf("monitors[%d]", i), "no monitor %q in this project", id)
			} else if err != nil {
				return err
			}
		}
	}
	if in.Tags != nil {
		w.Tags = *in.Tags
	}
	if in.All != nil {
		w.All = *in.All
	}
	if in.StartsAt != nil || in.EndsAt != nil {
		w.Schedule, w.DurationSeconds = nil, 0
	}
	if in.StartsAt != nil {
		w.StartsAt = *in.StartsAt
	}
	if in.EndsAt != nil {
		w.EndsAt = *in.EndsAt
	}
	if in.Schedule != nil || in.TZ != nil {
		expr, tz := "", ""
		if w.Schedule != nil {
			expr, tz = w.Schedule.Expr, w.Schedule.TZ
		}
		if in.Schedule != nil {
			expr = *in.Schedule
		}
		if in.TZ != nil {
			tz = *in.TZ
		}
		spec, err := monitors.ParseMaintenanceSchedule(expr, tz)
		if err != nil {
			return err
		}
		w.Schedule, w.StartsAt, w.EndsAt = spec, time.Time{}, time.Time{}
	}
	if in.DurationSeconds != nil {
		w.DurationSeconds = *in.DurationSeconds
	}
	return w.Validate()
}

// listWindows answers GET /api/v1/maintenance-windows.
func (h *Handler) listWindows(c echo.Context, rq *request) error {
	ws, err := h.store.MaintenanceWindowList(c.Request().Context(), rq.key.ProjectID)
	if err != nil {
		return err
	}
	now := h.now()
	out := MaintenanceWindowList{MaintenanceWindows: make([]MaintenanceWindow, 0, len(ws))}
	for _, w := range ws {
		out.MaintenanceWindows = append(out.MaintenanceWindows, windowJSON(w, now))
	}
	return c.JSON(http.StatusOK, out)
}

// getWindow answers GET /api/v1/maintenance-windows/{id}.
func (h *Handler) getWindow(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	w, err := h.store.MaintenanceWindowGet(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("maintenance window", id)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, windowJSON(w, h.now()))
}

// createWindow answers POST /api/v1/maintenance-windows.
func (h *Handler) createWindow(c echo.Context, rq *request) error {
	var in MaintenanceWindowFields
	obj, err := h.decodeBody(c, &in, readOnlyFields(MaintenanceWindow{}, MaintenanceWindowFields{}))
	if err != nil {
		return err
	}
	now := h.now().UTC().Truncate(time.Microsecond)
	w := &monitors.MaintenanceWindow{ID: keys.NewID(), ProjectID: rq.key.ProjectID, CreatedAt: now, UpdatedAt: now}
	if in.Name == nil {
		return invalidf("name", "is required")
	}
	if err := h.applyWindowFields(c, rq, obj, &in, w); err != nil {
		return err
	}
	if err := h.store.MaintenanceWindowCreate(c.Request().Context(), w); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, windowJSON(w, now))
}

// patchWindow answers PATCH /api/v1/maintenance-windows/{id}.
func (h *Handler) patchWindow(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	var in MaintenanceWindowFields
	obj, err := h.decodeBody(c, &in, readOnlyFields(MaintenanceWindow{}, MaintenanceWindowFields{}))
	if err != nil {
		return err
	}
	now := h.now()
	w, err := h.store.MaintenanceWindowModify(c.Request().Context(), rq.key.ProjectID, id, func(w *monitors.MaintenanceWindow) error {
		w.UpdatedAt = now.UTC().Truncate(time.Microsecond)
		return h.applyWindowFields(c, rq, obj, &in, w)
	})
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("maintenance window", id)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, windowJSON(w, now))
}

// endWindow answers POST /api/v1/maintenance-windows/{id}/end.
func (h *Handler) endWindow(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	now := h.now()
	w, err := h.store.MaintenanceWindowModify(c.Request().Context(), rq.key.ProjectID, id, func(w *monitors.MaintenanceWindow) error {
		w.End(now)
		return nil
	})
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("maintenance window", id)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, windowJSON(w, now))
}

// deleteWindow answers DELETE /api/v1/maintenance-windows/{id}.
func (h *Handler) deleteWindow(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	err := h.store.MaintenanceWindowDelete(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("maintenance window", id)
	}
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
