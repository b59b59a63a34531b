package api

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

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
