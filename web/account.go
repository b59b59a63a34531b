package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// The account page (a person's own password and sessions) and the
// rotation of ping keys from the dashboard.

type accountData struct {
	Error string
}

func (h *Handler) account(c echo.Context) error {
	return h.renderAccount(c, http.StatusOK, &accountData{})
}

func (h *Handler) renderAccount(c echo.Context, status int, d *accountData) error {
	v := c.Get(viewerKey).(*viewer)
	return h.render(c, status, "account", &page{Title: "Your account", Nav: "account", V: v, Data: d})
}

// accountPassword changes the viewer's password: the current one is
// required, and every other session of the account ends, so a password
// changed because it leaked also signs out whoever used it.
func (h *Handler) accountPassword(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	current, next, again := c.FormValue("current_password"), c.FormValue("new_password"), c.FormValue("new_password2")
	if bcrypt.CompareHashAndPassword([]byte(v.User.PasswordHash), []byte(current)) != nil {
		h.log.Info("password change refused: wrong current password", "user_id", v.User.ID, "remote_addr", c.Request().RemoteAddr)
		return h.renderAccount(c, http.StatusUnauthorized, &accountData{Error: "Current password: that is not your password."})
	}
	if next != again {
		return h.renderAccount(c, http.StatusUnprocessableEntity, &accountData{Error: "New password: the two entries differ."})
	}
	hash, err := HashPassword(next)
	if err != nil {
		return h.renderAccount(c, http.StatusUnprocessableEntity, &accountData{Error: "New password: " + err.Error() + "."})
	}
	if err := h.store.UserSetPassword(c.Request().Context(), &monitors.UserSetPasswordParams{ID: v.User.ID, PasswordHash: hash,
		KeepSessionID: v.Session.ID}); err != nil {
		return err
	}
	h.log.Info("password changed from the dashboard", "user_id", v.User.ID)
	h.flash(c, "Password changed. Every other session of your account is signed out.")
	return redirect(c, "/account")
}

// accountSignOutEverywhere ends every session of the viewer's account,
// this one included.
func (h *Handler) accountSignOutEverywhere(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	n, err := h.store.SessionDeleteByUser(c.Request().Context(), &monitors.SessionDeleteByUserParams{UserID: v.User.ID})
	if err != nil {
		return err
	}
	h.log.Info("signed out everywhere", "user_id", v.User.ID, "sessions", n)
	c.SetCookie(&http.Cookie{Name: h.sessionCookieName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	h.flash(c, "Signed out everywhere: every session of your account has ended.")
	return redirect(c, "/login")
}

// settingsRotatePingKey gives the project a new project ping key: URLs
// with the old one stop working at once.
func (h *Handler) settingsRotatePingKey(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	prj, err := h.store.ProjectRotatePingKey(c.Request().Context(), &monitors.PingKeyRotateParams{
		ProjectID: v.Project.ID, PingKey: keys.NewProjectPingKey(), Now: h.now()})
	if err != nil {
		return err
	}
	h.log.Info("project ping key rotated from the dashboard", "project_id", prj.ID, "user_id", v.User.ID)
	h.flash(c, "New project ping key. Ping URLs with the old key now answer 404: update every job that pings by slug.")
	return redirect(c, "/settings")
}

// monitorRotatePingKey gives a monitor a new ping key: its old ping URL
// stops working at once.
func (h *Handler) monitorRotatePingKey(c echo.Context) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	m, err = h.store.MonitorRotatePingKey(c.Request().Context(), &monitors.PingKeyRotateParams{
		ProjectID: m.ProjectID, ID: m.ID, PingKey: keys.NewPingKey(), Now: h.now()})
	if err != nil {
		return err
	}
	h.log.Info("monitor ping key rotated from the dashboard", "project_id", m.ProjectID, "monitor_id", m.ID, "user_id", v.User.ID)
	h.flash(c, "New ping URL. The old one now answers 404: update every job that pings this monitor.")
	return redirect(c, "/monitors/"+m.ID)
}
