package web

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// Snooze from the dashboard (the monitor page's "Snooze 1 h", a custom
// duration, "End snooze"), and from the signed link of a notification,
// which needs no sign-in: GET shows what it would do, POST does it. Both
// go through manage, as the API's POST/DELETE .../snooze.

// monitorSnooze snoozes a monitor for the form's duration ("for": 1h,
// 30m, 2d).
func (h *Handler) monitorSnooze(c echo.Context) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	secs, err := parseFormDuration(c.FormValue("for"))
	if err != nil || secs <= 0 {
		h.flashError(c, "Snooze: enter how long, such as 1h, 30m or 2d.")
		return redirect(c, "/monitors/"+m.ID)
	}
	got, err := h.manage.MonitorSnooze(c.Request().Context(), v.Project.ID, m.ID, &manage.Snooze{Seconds: &secs})
	var ve *monitors.ValidationError
	if errors.As(err, &ve) {
		h.flashError(c, "Snooze: "+ve.Message+".")
		return redirect(c, "/monitors/"+m.ID)
	}
	if err != nil {
		return err
	}
	until := v.when(*got.SnoozedUntil)
	h.flash(c, fmt.Sprintf("Snoozed until %s %s: incidents open and are shown, but nothing is sent until then.", until.Text, until.Zone))
	return redirect(c, "/monitors/"+m.ID)
}

// monitorUnsnooze ends a monitor's snooze now.
func (h *Handler) monitorUnsnooze(c echo.Context) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	if _, err := h.manage.MonitorUnsnooze(c.Request().Context(), v.Project.ID, m.ID); err != nil {
		return err
	}
	h.flash(c, "Snooze ended: an incident still open is notified now.")
	return redirect(c, "/monitors/"+m.ID)
}

// snoozeLinkData is what the page of a snooze link shows.
type snoozeLinkData struct {
	Monitor string
	For     string
	// Until is when the snooze ends (after the POST); Expires when the
	// link stops working.
	Until, Expires string
	Done           bool
	Action         string
}

// snoozeLink answers a notification's snooze link: GET shows what it
// would do, with a button; POST does it. A link that does not check
// (changed, another monitor's, another Vigil's) or has expired is
// refused, and nothing is done.
func (h *Handler) snoozeLink(c echo.Context) error {
	l, err := manage.ParseSnoozeLink(c.Param("id"), c.QueryParams())
	if err == nil {
		err = l.Check(h.signer, h.now())
	}
	switch {
	case errors.Is(err, manage.ErrLinkExpired):
		return h.renderError(c, http.StatusGone, "This snooze link has expired. Sign in to snooze the monitor from its page.")
	case err != nil:
		return h.renderError(c, http.StatusForbidden, "This snooze link is not valid: it was changed, or it is not one of this Vigil's. Sign in to snooze the monitor from its page.")
	}
	ctx := c.Request().Context()
	m, err := h.store.MonitorGet(ctx, l.ProjectID, l.MonitorID)
	if errors.Is(err, monitors.ErrNotFound) {
		return h.renderError(c, http.StatusNotFound, "The monitor of this snooze link no longer exists.")
	}
	if err != nil {
		return err
	}
	d := &snoozeLinkData{Monitor: m.Name, For: plainDuration(time.Duration(l.Seconds) * time.Second),
		Expires: l.Expires.UTC().Format("2006-01-02 15:04 UTC"), Action: c.Request().URL.RequestURI()}
	if c.Request().Method == http.MethodPost {
		got, err := h.manage.SnoozeByLink(ctx, h.signer, l)
		if err != nil {
			return err
		}
		h.log.Info("monitor snoozed by a notification's link", "monitor_id", m.ID, "until", got.SnoozedUntil)
		d.Done, d.Until = true, got.SnoozedUntil.UTC().Format("2006-01-02 15:04 UTC")
	}
	return h.render(c, http.StatusOK, "snooze_link", &page{Title: "Snooze " + m.Name, Data: d})
}
