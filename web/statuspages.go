package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// The dashboard's status pages: list, make, edit, publish and unpublish,
// delete. Every change goes through manage, as the API's do, and drops
// this replica's cached copy of the public page at once.

type statusPageRow struct {
	ID, Slug, Title, URL string
	Published            bool
	Shows                string
}

type statusPagesData struct {
	Pages []statusPageRow
	Error string
	Form  map[string]string
}

// statusPageList shows the project's status pages and the form to make
// one.
func (h *Handler) statusPageList(c echo.Context) error {
	return h.statusPagesPage(c, http.StatusOK, &statusPagesData{})
}

func (h *Handler) statusPagesPage(c echo.Context, status int, d *statusPagesData) error {
	v := c.Get(viewerKey).(*viewer)
	ps, err := h.store.StatusPageList(c.Request().Context(), v.Project.ID)
	if err != nil {
		return err
	}
	for _, p := range ps {
		var mons, tags int
		for _, it := range p.Items {
			if it.Tag != "" {
				tags++
			} else {
				mons++
			}
		}
		d.Pages = append(d.Pages, statusPageRow{ID: p.ID, Slug: p.Slug, Title: p.Title, URL: h.baseURL + "/status/" + p.Slug,
			Published: p.Published, Shows: fmt.Sprintf("%s, %s", count(mons, "monitor"), count(tags, "tag"))})
	}
	return h.render(c, status, "statuspages", &page{Title: "Status pages", Nav: "status", V: v, Data: d})
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// statusPageCreate makes an unpublished page from the form and opens its
// editor.
func (h *Handler) statusPageCreate(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	form := map[string]string{"slug": strings.TrimSpace(c.FormValue("slug")), "title": c.FormValue("title")}
	slug, title := form["slug"], form["title"]
	p, err := h.manage.StatusPageCreate(c.Request().Context(), v.Project.ID, &manage.StatusPageFields{Slug: &slug, Title: &title})
	var ve *monitors.ValidationError
	if errors.As(err, &ve) {
		return h.statusPagesPage(c, http.StatusUnprocessableEntity, &statusPagesData{Error: fieldText(ve), Form: form})
	}
	if err != nil {
		return err
	}
	h.statusCache.drop(p.ID, p.Slug)
	h.flash(c, "Status page "+p.Title+" made. It is not public until you publish it.")
	return redirect(c, "/status-pages/"+p.ID+"/edit")
}

// fieldText says a validation error in a person's words.
func fieldText(ve *monitors.ValidationError) string {
	if ve.Field == "" {
		return capitalize(ve.Message) + "."
	}
	return capitalize(strings.ReplaceAll(ve.Field, "_", " ")) + ": " + ve.Message + "."
}

// statusItemRow is one row of the editor: a monitor of the project, or a
// tag.
type statusItemRow struct {
	Key      string // form field suffix
	Monitor  *monitors.Monitor
	Tag      string
	Name     string
	Shown    bool
	Position int
}

type statusPageFormData struct {
	P     *monitors.StatusPage
	URL   string
	Rows  []statusItemRow
	Tags  []statusItemRow
	Error string
}

// statusPageEdit shows the editor of a page.
func (h *Handler) statusPageEdit(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	p, err := h.store.StatusPageGet(c.Request().Context(), v.Project.ID, c.Param("id"))
	if err != nil {
		return err
	}
	return h.statusPageForm(c, http.StatusOK, p, "")
}

func (h *Handler) statusPageForm(c echo.Context, status int, p *monitors.StatusPage, msg string) error {
	v := c.Get(viewerKey).(*viewer)
	all, err := h.store.MonitorList(c.Request().Context(), &monitors.MonitorListParams{ProjectID: v.Project.ID, Now: v.Now})
	if err != nil {
		return err
	}
	d := &statusPageFormData{P: p, URL: h.baseURL + "/status/" + p.Slug, Error: msg}
	pos := map[string]int{}
	for i, it := range p.Items {
		if it.Monitor != "" {
			pos[it.Monitor] = i + 1
		} else {
			d.Tags = append(d.Tags, statusItemRow{Key: strconv.Itoa(len(d.Tags)), Tag: it.Tag, Name: it.Name, Shown: true, Position: i + 1})
		}
	}
	for _, it := range p.Items {
		if it.Monitor == "" {
			continue
		}
		for _, m := range all {
			if m.ID == it.Monitor {
				d.Rows = append(d.Rows, statusItemRow{Key: m.ID, Monitor: m, Name: it.Name, Shown: true, Position: pos[m.ID]})
			}
		}
	}
	for _, m := range all {
		if pos[m.ID] == 0 {
			d.Rows = append(d.Rows, statusItemRow{Key: m.ID, Monitor: m})
		}
	}
	for range 3 { // room for new tags
		d.Tags = append(d.Tags, statusItemRow{Key: strconv.Itoa(len(d.Tags))})
	}
	return h.render(c, status, "statuspage_form", &page{Title: "Edit " + p.Title, Nav: "status", V: v, Data: d})
}

// statusPageUpdate saves the editor: title, slug, published, and the
// items: the monitors ticked and the tags named, in the order of their
// positions (rows without one after those with, in the form's order).
func (h *Handler) statusPageUpdate(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	ctx := c.Request().Context()
	id := c.Param("id")
	old, err := h.store.StatusPageGet(ctx, v.Project.ID, id)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read.")
	}
	type placed struct {
		item monitors.StatusPageItem
		pos  int
		seq  int
	}
	var items []placed
	position := func(s string) int {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return 1 << 30
		}
		return n
	}
	all, err := h.store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: v.Project.ID, Now: v.Now})
	if err != nil {
		return err
	}
	for _, m := range all {
		if form.Get("show-"+m.ID) == "" {
			continue
		}
		items = append(items, placed{monitors.StatusPageItem{Monitor: m.ID, Name: form.Get("name-" + m.ID)}, position(form.Get("pos-" + m.ID)), len(items)})
	}
	for i := 0; form.Has("tag-" + strconv.Itoa(i)); i++ {
		k := strconv.Itoa(i)
		if t := strings.TrimSpace(form.Get("tag-" + k)); t != "" {
			items = append(items, placed{monitors.StatusPageItem{Tag: t, Name: form.Get("heading-" + k)}, position(form.Get("tagpos-" + k)), len(items)})
		}
	}
	slices.SortStableFunc(items, func(a, b placed) int { return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.seq, b.seq)) })
	list := make([]monitors.StatusPageItem, 0, len(items))
	for _, it := range items {
		list = append(list, it.item)
	}
	slug, title, published := strings.TrimSpace(form.Get("slug")), form.Get("title"), form.Get("published") != ""
	p, err := h.manage.StatusPageChange(ctx, v.Project.ID, id, &manage.StatusPageFields{Slug: &slug, Title: &title,
		Published: &published, Items: &list})
	var ve *monitors.ValidationError
	if errors.As(err, &ve) {
		draft := *old
		draft.Slug, draft.Title, draft.Published, draft.Items = slug, title, published, list
		return h.statusPageForm(c, http.StatusUnprocessableEntity, &draft, h.itemErrorText(ve, list, all))
	}
	if err != nil {
		return err
	}
	h.statusCache.drop(p.ID, old.Slug, p.Slug)
	h.flash(c, "Status page "+p.Title+" saved"+map[bool]string{true: " and public.", false: "; it is not public."}[p.Published])
	return redirect(c, "/status-pages")
}

// itemErrorText names the item of a validation error by what the person
// sees: the monitor's name or the tag.
func (h *Handler) itemErrorText(ve *monitors.ValidationError, items []monitors.StatusPageItem, all []*monitors.Monitor) string {
	var i int
	if _, err := fmt.Sscanf(ve.Field, "items[%d]", &i); err != nil || i < 0 || i >= len(items) {
		return fieldText(ve)
	}
	what := "Tag " + items[i].Tag
	for _, m := range all {
		if m.ID == items[i].Monitor {
			what = "Monitor " + m.Name
		}
	}
	return what + ": " + ve.Message + "."
}

// statusPagePublish publishes or unpublishes a page.
func (h *Handler) statusPagePublish(published bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := c.Get(viewerKey).(*viewer)
		p, err := h.manage.StatusPageChange(c.Request().Context(), v.Project.ID, c.Param("id"), &manage.StatusPageFields{Published: &published})
		if err != nil {
			return err
		}
		h.statusCache.drop(p.ID, p.Slug)
		if published {
			h.flash(c, "Status page "+p.Title+" is public at "+h.baseURL+"/status/"+p.Slug+".")
		} else {
			h.flash(c, "Status page "+p.Title+" is no longer public: its address answers 404.")
		}
		return redirect(c, "/status-pages")
	}
}

// statusPageDelete deletes a page.
func (h *Handler) statusPageDelete(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	ctx := c.Request().Context()
	p, err := h.store.StatusPageGet(ctx, v.Project.ID, c.Param("id"))
	if err != nil {
		return err
	}
	if err := h.manage.StatusPageDelete(ctx, v.Project.ID, p.ID); err != nil {
		return err
	}
	h.statusCache.drop(p.ID, p.Slug)
	h.flash(c, "Status page "+p.Title+" deleted.")
	return redirect(c, "/status-pages")
}

// incidentNoteCreate attaches a person's public note to an incident of
// the monitor, from the monitor page.
func (h *Handler) incidentNoteCreate(c echo.Context) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	in, err := h.store.IncidentGet(ctx, v.Project.ID, c.Param("incident"))
	if err != nil {
		return err
	}
	if in.MonitorID != m.ID {
		return monitors.ErrNotFound
	}
	_, err = h.manage.IncidentNoteAdd(ctx, v.Project.ID, in.ID, c.FormValue("body"))
	var ve *monitors.ValidationError
	if errors.As(err, &ve) {
		h.flashError(c, "Note: "+ve.Message+".")
		return redirect(c, "/monitors/"+m.ID+"#incident-"+in.ID)
	}
	if err != nil {
		return err
	}
	h.statusCache.dropProject(v.Project.ID)
	h.flash(c, "Note added. Status pages showing "+m.Name+" show it.")
	return redirect(c, "/monitors/"+m.ID+"#incident-"+in.ID)
}

// incidentNoteDelete deletes a note of an incident of the monitor.
func (h *Handler) incidentNoteDelete(c echo.Context) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	in, err := h.store.IncidentGet(ctx, v.Project.ID, c.Param("incident"))
	if err != nil {
		return err
	}
	ns, err := h.store.IncidentNoteList(ctx, v.Project.ID, []string{in.ID})
	if err != nil {
		return err
	}
	if in.MonitorID != m.ID || !slices.ContainsFunc(ns[in.ID], func(n *monitors.IncidentNote) bool { return n.ID == c.Param("note") }) {
		return monitors.ErrNotFound
	}
	if err := h.manage.IncidentNoteDelete(ctx, v.Project.ID, c.Param("note")); err != nil {
		return err
	}
	h.statusCache.dropProject(v.Project.ID)
	h.flash(c, "Note deleted.")
	return redirect(c, "/monitors/"+m.ID+"#incident-"+in.ID)
}
