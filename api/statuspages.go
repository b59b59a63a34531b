package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// statusPageJSON is the JSON form of p.
func (h *Handler) statusPageJSON(p *monitors.StatusPage) StatusPage {
	out := StatusPage{ID: p.ID, Slug: p.Slug, Title: p.Title, Published: p.Published, Items: make([]StatusPageItem, 0, len(p.Items)),
		URL: h.baseURL + "/status/" + p.Slug, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
	for _, it := range p.Items {
		out.Items = append(out.Items, StatusPageItem(it))
	}
	return out
}

// statusPageFields turns a decoded body into the service's fields.
func statusPageFields(obj object, in *StatusPageFields) (*manage.StatusPageFields, error) {
	for _, name := range sortedKeys(obj) {
		if obj.isNull(name) {
			return nil, invalidf(name, "must not be null")
		}
	}
	f := &manage.StatusPageFields{Slug: in.Slug, Title: in.Title, Published: in.Published}
	if in.Items != nil {
		items := make([]monitors.StatusPageItem, 0, len(*in.Items))
		for _, it := range *in.Items {
			items = append(items, monitors.StatusPageItem(it))
		}
		f.Items = &items
	}
	return f, nil
}

// listStatusPages answers GET /api/v1/status-pages.
func (h *Handler) listStatusPages(c echo.Context, rq *request) error {
	ps, err := h.store.StatusPageList(c.Request().Context(), rq.key.ProjectID)
	if err != nil {
		return err
	}
	out := StatusPageList{StatusPages: make([]StatusPage, 0, len(ps))}
	for _, p := range ps {
		out.StatusPages = append(out.StatusPages, h.statusPageJSON(p))
	}
	return c.JSON(http.StatusOK, out)
}

// getStatusPage answers GET /api/v1/status-pages/{id}.
func (h *Handler) getStatusPage(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	p, err := h.store.StatusPageGet(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("status page", id)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.statusPageJSON(p))
}

// createStatusPage answers POST /api/v1/status-pages.
func (h *Handler) createStatusPage(c echo.Context, rq *request) error {
	var in StatusPageFields
	obj, err := h.decodeBody(c, &in, readOnlyFields(StatusPage{}, StatusPageFields{}))
	if err != nil {
		return err
	}
	f, err := statusPageFields(obj, &in)
	if err != nil {
		return err
	}
	p, err := h.manage.StatusPageCreate(c.Request().Context(), rq.key.ProjectID, f)
	if err != nil {
		return err
	}
	h.statusChanged(rq.key.ProjectID, p.Slug)
	return c.JSON(http.StatusCreated, h.statusPageJSON(p))
}

// patchStatusPage answers PATCH /api/v1/status-pages/{id}.
func (h *Handler) patchStatusPage(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	var in StatusPageFields
	obj, err := h.decodeBody(c, &in, readOnlyFields(StatusPage{}, StatusPageFields{}))
	if err != nil {
		return err
	}
	f, err := statusPageFields(obj, &in)
	if err != nil {
		return err
	}
	p, err := h.manage.StatusPageChange(c.Request().Context(), rq.key.ProjectID, id, f)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("status page", id)
	}
	if err != nil {
		return err
	}
	h.statusChanged(rq.key.ProjectID, p.Slug)
	return c.JSON(http.StatusOK, h.statusPageJSON(p))
}

// deleteStatusPage answers DELETE /api/v1/status-pages/{id}.
func (h *Handler) deleteStatusPage(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	err := h.manage.StatusPageDelete(c.Request().Context(), rq.key.ProjectID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("status page", id)
	}
	if err != nil {
		return err
	}
	h.statusChanged(rq.key.ProjectID)
	return c.NoContent(http.StatusNoContent)
}

func noteJSON(ns []*monitors.IncidentNote) []IncidentNote {
	out := make([]IncidentNote, 0, len(ns))
	for _, n := range ns {
		out = append(out, IncidentNote{ID: n.ID, IncidentID: n.IncidentID, Body: n.Body, CreatedAt: n.CreatedAt.UTC()})
	}
	return out
}

// listIncidentNotes answers GET /api/v1/incidents/{id}/notes.
func (h *Handler) listIncidentNotes(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	ctx := c.Request().Context()
	if _, err := h.store.IncidentGet(ctx, rq.key.ProjectID, id); errors.Is(err, monitors.ErrNotFound) {
		return notFound("incident", id)
	} else if err != nil {
		return err
	}
	ns, err := h.store.IncidentNoteList(ctx, rq.key.ProjectID, []string{id})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, IncidentNoteList{Notes: noteJSON(ns[id])})
}

// createIncidentNote answers POST /api/v1/incidents/{id}/notes.
func (h *Handler) createIncidentNote(c echo.Context, rq *request) error {
	id := pathParam(c, "id")
	var in IncidentNoteCreate
	if _, err := h.decodeBody(c, &in, readOnlyFields(IncidentNote{}, IncidentNoteCreate{})); err != nil {
		return err
	}
	if in.Body == nil {
		return invalidf("body", "is required")
	}
	n, err := h.manage.IncidentNoteAdd(c.Request().Context(), rq.key.ProjectID, id, *in.Body)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFound("incident", id)
	}
	if err != nil {
		return err
	}
	h.statusChanged(rq.key.ProjectID)
	return c.JSON(http.StatusCreated, noteJSON([]*monitors.IncidentNote{n})[0])
}

// deleteIncidentNote answers DELETE /api/v1/incidents/{id}/notes/{note}.
func (h *Handler) deleteIncidentNote(c echo.Context, rq *request) error {
	id, note := pathParam(c, "id"), pathParam(c, "note")
	ctx := c.Request().Context()
	ns, err := h.store.IncidentNoteList(ctx, rq.key.ProjectID, []string{id})
	if err != nil {
		return err
	}
	found := false
	for _, n := range ns[id] {
		found = found || n.ID == note
	}
	if !found {
		return notFound("note", note)
	}
	if err := h.manage.IncidentNoteDelete(ctx, rq.key.ProjectID, note); errors.Is(err, monitors.ErrNotFound) {
		return notFound("note", note)
	} else if err != nil {
		return err
	}
	h.statusChanged(rq.key.ProjectID)
	return c.NoContent(http.StatusNoContent)
}
