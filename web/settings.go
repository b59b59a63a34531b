package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

type keyRow struct {
	ID, Name, Prefix string
	ReadOnly         bool
	Created          *When
	LastUsed         *When
	Revoked          *When
}

type keysData struct {
	Keys []keyRow
	// NewKey is the key just created, shown this once.
	NewKey  string
	NewName string
	Error   string
	BaseURL string
}

func (h *Handler) keysPage(c echo.Context, status int, d *keysData) error {
	v := c.Get(viewerKey).(*viewer)
	list, err := h.store.APIKeyList(c.Request().Context(), v.Project.ID)
	if err != nil {
		return err
	}
	// Newest first: the key just made is on top.
	for i := len(list) - 1; i >= 0; i-- {
		k := list[i]
		d.Keys = append(d.Keys, keyRow{ID: k.ID, Name: k.Name, Prefix: k.Prefix, ReadOnly: k.ReadOnly,
			Created: v.when(k.CreatedAt), LastUsed: v.whenPtr(k.LastUsedAt), Revoked: v.whenPtr(k.RevokedAt)})
	}
	d.BaseURL = h.baseURL
	return h.render(c, status, "keys", &page{Title: "API keys", Nav: "keys", V: v, Data: d})
}

func (h *Handler) keyList(c echo.Context) error { return h.keysPage(c, http.StatusOK, &keysData{}) }

// keyCreate makes an API key and shows it this once: only its hash is
// stored.
func (h *Handler) keyCreate(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	k, key, err := h.manage.APIKeyCreate(c.Request().Context(), &manage.APIKeyCreateParams{ProjectID: v.Project.ID,
		Name: c.FormValue("name"), ReadOnly: c.FormValue("read_only") == "on"})
	var verr *monitors.ValidationError
	if errors.As(err, &verr) {
		return h.keysPage(c, http.StatusUnprocessableEntity, &keysData{Error: "Name: " + capitalize(verr.Message) + "."})
	}
	if err != nil {
		return err
	}
	name, prefix := k.Name, k.Prefix
	h.log.Info("API key created from the dashboard", "project_id", v.Project.ID, "user_id", v.User.ID, "prefix", prefix)
	return h.keysPage(c, http.StatusCreated, &keysData{NewKey: key, NewName: name})
}

func (h *Handler) keyRevoke(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	if err := h.manage.APIKeyRevoke(c.Request().Context(), v.Project.ID, c.Param("id")); err != nil {
		return err
	}
	h.flash(c, "Revoked. Requests with that key are refused from now on.")
	return redirect(c, "/keys")
}

type settingsData struct {
	Name    string
	PingKey string
	Example string
	Error   string
}

func (h *Handler) settings(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	return h.renderSettings(c, http.StatusOK, v, &settingsData{Name: v.Project.Name})
}

func (h *Handler) renderSettings(c echo.Context, status int, v *viewer, d *settingsData) error {
	d.PingKey = v.Project.PingKey
	d.Example = h.baseURL + "/ping/" + v.Project.PingKey + "/nightly-backup?create=1"
	return h.render(c, status, "settings", &page{Title: "Project settings", Nav: "settings", V: v, Data: d})
}

func (h *Handler) settingsUpdate(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	name := strings.TrimSpace(c.FormValue("name"))
	if name == "" || len(name) > 200 {
		return h.renderSettings(c, http.StatusUnprocessableEntity, v, &settingsData{Name: name,
			Error: "Name: give the project a name of at most 200 characters."})
	}
	if _, err := h.store.ProjectRename(c.Request().Context(), &monitors.ProjectRenameParams{ID: v.Project.ID, Name: name}); err != nil {
		return err
	}
	h.flash(c, "Saved.")
	return redirect(c, "/settings")
}
