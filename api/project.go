package api

import (
	"errors"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// getProject answers GET /api/v1/project: the key's project, with the
// badge URLs of all its monitors and of each tag in use.
func (h *Handler) getProject(c echo.Context, rq *request) error {
	prj, err := h.project(c, rq)
	if err != nil {
		return err
	}
	secret, err := h.badgeKey(c, rq)
	if err != nil {
		return err
	}
	ms, err := h.store.MonitorList(c.Request().Context(), &monitors.MonitorListParams{ProjectID: prj.ID, Now: h.now()})
	if err != nil {
		return err
	}
	var tags []string
	for _, m := range ms {
		tags = append(tags, m.Tags...)
	}
	slices.Sort(tags)
	out := Project{ID: prj.ID, Name: prj.Name, PingKey: prj.PingKey, CreatedAt: prj.CreatedAt.UTC(),
		Badges: map[string]BadgeURLs{allTarget: h.badgeURLs(prj.ID, secret, allTarget)}}
	if rq.key.ReadOnly {
		out.PingKey = ""
	}
	for _, t := range slices.Compact(tags) {
		out.Badges[t] = h.badgeURLs(prj.ID, secret, tagTarget(t))
	}
	return c.JSON(http.StatusOK, out)
}

// rotateProjectPingKey answers POST /api/v1/project/rotate-ping-key: the
// project gets a new project ping key, and pings by slug with the old one
// are not found from the answer on.
func (h *Handler) rotateProjectPingKey(c echo.Context, rq *request) error {
	prj, err := h.store.ProjectRotatePingKey(c.Request().Context(), &monitors.PingKeyRotateParams{
		ProjectID: rq.key.ProjectID, PingKey: keys.NewProjectPingKey(), Now: h.now()})
	if err != nil {
		return err
	}
	h.log.Info("project ping key rotated", "project_id", prj.ID, "api_key_prefix", rq.key.Prefix)
	rq.project = prj
	return h.getProject(c, rq)
}

// rotateMonitorPingKey answers POST /api/v1/monitors/{id}/rotate-ping-key:
// the monitor gets a new ping key, and pings with the old one are not
// found from the answer on.
func (h *Handler) rotateMonitorPingKey(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	ctx := c.Request().Context()
	m, err := h.store.MonitorRotatePingKey(ctx, &monitors.PingKeyRotateParams{
		ProjectID: rq.key.ProjectID, ID: id, PingKey: keys.NewPingKey(), Now: h.now()})
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("monitor", id)
	}
	if err != nil {
		return err
	}
	h.log.Info("monitor ping key rotated", "project_id", m.ProjectID, "monitor_id", m.ID, "api_key_prefix", rq.key.Prefix)
	return h.respondMonitor(c, rq, http.StatusOK, m, nil)
}
