package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

type windowView struct {
	ID, Name, Covers, When, State string
	Active                        bool
	Over                          bool
}

type maintenanceData struct {
	Windows []windowView
	Error   string
	Form    map[string]string
	Zone    string
}

// maintenanceList shows the project's maintenance windows and the form to
// make one.
func (h *Handler) maintenanceList(c echo.Context) error {
	return h.maintenancePage(c, http.StatusOK, &maintenanceData{})
}

func (h *Handler) maintenancePage(c echo.Context, status int, d *maintenanceData) error {
	v := c.Get(viewerKey).(*viewer)
	ws, err := h.store.MaintenanceWindowList(c.Request().Context(), v.Project.ID)
	if err != nil {
		return err
	}
	d.Zone = v.Loc.String()
	for _, w := range ws {
		wv := windowView{ID: w.ID, Name: w.Name, Covers: windowCovers(w), Active: w.Active(v.Now)}
		if w.Schedule != nil {
			wv.When = w.Schedule.Expr + " (" + w.Schedule.TZ + "), for " + plainDuration(time.Duration(w.DurationSeconds)*time.Second)
		} else {
			wv.When = v.when(w.StartsAt).Text + " to " + v.when(w.EndsAt).Text + " " + v.when(w.EndsAt).Zone
		}
		switch next := w.NextStart(v.Now); {
		case wv.Active:
			p, _ := w.PeriodAt(v.Now)
			wv.State = "in effect until " + v.when(p.End).Text
		case next != nil:
			wv.State = "next " + v.when(*next).Text
		default:
			wv.State, wv.Over = "over", true
		}
		d.Windows = append(d.Windows, wv)
	}
	return h.render(c, status, "maintenance", &page{Title: "Maintenance", Nav: "maintenance", V: v, Data: d})
}

func windowCovers(w *monitors.MaintenanceWindow) string {
	if w.All {
		return "all monitors"
	}
	var parts []string
	for _, t := range w.Tags {
		parts = append(parts, "tag "+t)
	}
	if n := len(w.Monitors); n == 1 {
		parts = append(parts, "1 monitor")
	} else if n > 1 {
		parts = append(parts, strconv.Itoa(n)+" monitors")
	}
	return strings.Join(parts, ", ")
}

// maintenanceCreate makes a window from the form: one period (starts, or
// now, for a duration) or a recurring one (a schedule, each occurrence
// lasting the duration).
func (h *Handler) maintenanceCreate(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	form := map[string]string{}
	for _, k := range []string{"name", "tags", "monitor", "all", "starts", "for", "schedule"} {
		form[k] = strings.TrimSpace(c.FormValue(k))
	}
	fail := func(msg string) error {
		return h.maintenancePage(c, http.StatusUnprocessableEntity, &maintenanceData{Error: msg, Form: form})
	}
	now := v.Now.UTC().Truncate(time.Microsecond)
	w := &monitors.MaintenanceWindow{ID: keys.NewID(), ProjectID: v.Project.ID, Name: form["name"],
		All: form["all"] == "on", Tags: []string{}, Monitors: []string{}, CreatedAt: now, UpdatedAt: now}
	for _, t := range strings.FieldsFunc(form["tags"], func(r rune) bool { return r == ',' || r == ' ' }) {
		w.Tags = append(w.Tags, t)
	}
	if id := form["monitor"]; id != "" {
		if _, err := h.store.MonitorGet(c.Request().Context(), v.Project.ID, id); err != nil {
			return fail("Monitor: no such monitor in this project.")
		}
		w.Monitors = []string{id}
	}
	d, err := time.ParseDuration(form["for"])
	if err != nil || d <= 0 {
		return fail("For: write how long it lasts, such as 2h or 30m.")
	}
	if form["schedule"] != "" {
		spec, err := monitors.ParseMaintenanceSchedule(form["schedule"], v.Loc.String())
		if err != nil {
			return fail(windowErrorText(err))
		}
		w.Schedule, w.DurationSeconds = spec, int64(d/time.Second)
	} else {
		start := now
		if s := form["starts"]; s != "" {
			t, err := time.ParseInLocation("2006-01-02T15:04", s, v.Loc)
			if err != nil {
				return fail("Starts: a date and time such as 2026-03-02T22:00.")
			}
			start = t.UTC()
		}
		w.StartsAt, w.EndsAt = start, start.Add(d)
	}
	if err := h.store.MaintenanceWindowCreate(c.Request().Context(), w); err != nil {
		var ve *monitors.ValidationError
		if errors.As(err, &ve) {
			return fail(windowErrorText(err))
		}
		return err
	}
	h.flash(c, "Maintenance window “"+w.Name+"” saved.")
	if id := form["monitor"]; id != "" && c.FormValue("back") == "monitor" {
		return redirect(c, "/monitors/"+id)
	}
	return redirect(c, "/maintenance")
}

func windowErrorText(err error) string {
	var ve *monitors.ValidationError
	if errors.As(err, &ve) {
		return capitalize(strings.ReplaceAll(ve.Field, "_", " ")) + ": " + ve.Message + "."
	}
	return err.Error()
}

// maintenanceEnd ends a window now.
func (h *Handler) maintenanceEnd(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	w, err := h.store.MaintenanceWindowModify(c.Request().Context(), v.Project.ID, c.Param("id"), func(w *monitors.MaintenanceWindow) error {
		w.End(v.Now)
		return nil
	})
	if errors.Is(err, monitors.ErrNotFound) {
		return h.renderError(c, http.StatusNotFound, "No such maintenance window.")
	}
	if err != nil {
		return err
	}
	h.flash(c, "Maintenance window “"+w.Name+"” ended.")
	return redirect(c, "/maintenance")
}

// maintenanceDelete deletes a window.
func (h *Handler) maintenanceDelete(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	err := h.store.MaintenanceWindowDelete(c.Request().Context(), v.Project.ID, c.Param("id"))
	if err != nil && !errors.Is(err, monitors.ErrNotFound) {
		return err
	}
	h.flash(c, "Maintenance window deleted.")
	return redirect(c, "/maintenance")
}
