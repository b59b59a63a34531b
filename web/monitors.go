package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/monitors"
)

const (
	// sparkRuns is how many recent runs a sparkline draws.
	sparkRuns = 20
	// History shown on a monitor page.
	pageRuns      = 60
	pagePings     = 50
	pageIncidents = 20
)

// monitorRow is a monitor as the list shows it.
type monitorRow struct {
	ID, Name, Slug string
	Tags           []string
	Status         monitors.Status
	Schedule       string
	Zone           string
	// Next is when the next ping is due; NextLabel says what it is.
	Next      *When
	NextLabel string
	LastPing  *When
	LastKind  monitors.PingKind
	Spark     template.HTML
	// Why explains the status in a sentence, for late, retrying and down.
	Why string
	// Advice warns of settings that will page falsely or stay silent
	// (monitors.Adviser, as the API's warnings).
	Advice []monitors.Advice
	// Snoozed is when the monitor's snooze ends; nil when not snoozed.
	Snoozed *When
}

// AdviceFields names the fields the advice is about, for the list.
func (r *monitorRow) AdviceFields() string {
	fields := make([]string, len(r.Advice))
	for i, a := range r.Advice {
		fields[i] = a.Field
	}
	return strings.Join(fields, ", ")
}

// AdviceText is every advice in full, for the list's tooltip.
func (r *monitorRow) AdviceText() string {
	return strings.Join(monitors.AdviceStrings(r.Advice), "\n")
}

// monitorRow is m as the list shows it at v.Now. Whatever in it changes
// with time alone notes when it does (viewer.changesAt): the times said
// relative to now, the status by the expected time (Monitor.StatusAt),
// the snooze's end, the next run of a schedule not yet watched. Advice
// does not change with time (Adviser keeps a schedule's gap).
func (h *Handler) monitorRow(v *viewer, m *monitors.Monitor, spark template.HTML) *monitorRow {
	st := m.StatusAt(v.Now)
	if st == monitors.StatusUp && m.State.Expected.After(v.Now) {
		v.changesAt(m.State.Expected)
	}
	r := &monitorRow{ID: m.ID, Name: m.Name, Slug: m.Slug, Tags: m.Tags, Status: st,
		LastPing: v.when(m.State.LastPingAt), LastKind: m.State.LastPingKind, Spark: spark,
		Advice: h.adviser.Advise(m, v.Now)}
	if m.SnoozedUntil != nil && m.SnoozedUntil.After(v.Now) {
		v.changesAt(*m.SnoozedUntil)
	}
	if m.Snoozed(v.Now) {
		r.Snoozed = v.whenPtr(m.SnoozedUntil)
	}
	r.Schedule, r.Zone = scheduleWords(m.Schedule)
	switch {
	case m.Paused:
		r.NextLabel = "paused: nothing is expected"
	case m.Undeclared():
		r.NextLabel = "undeclared: nothing is expected"
	case m.State.NextRetry() != nil:
		r.Next, r.NextLabel = v.when(m.State.NextRetry().At), "retry announced"
	case !m.State.Expected.IsZero():
		r.Next, r.NextLabel = v.when(m.State.Expected), "expected"
		if st == monitors.StatusLate {
			r.NextLabel = "was expected"
		}
	default:
		r.NextLabel = "after the first ping"
		if sched, err := monitors.ParseSchedule(m.Schedule); err == nil && m.Schedule.Kind != monitors.ScheduleInterval {
			if next := sched.Next(v.Now); !next.IsZero() {
				v.changesAt(next) // the next run after it is another
				r.Next, r.NextLabel = v.when(next), "next run; watched after the first ping"
			}
		}
	}
	switch st {
	case monitors.StatusLate:
		downAt := m.State.Expected.Add(m.Grace())
		r.Why = fmt.Sprintf("No ping since it was expected; it goes down %s unless one arrives.", v.relative(downAt))
	case monitors.StatusRetrying:
		r.Why = "A failed attempt announced a retry; the retry has not reported yet."
		if n := len(m.State.Retries); n > 1 {
			r.Why = fmt.Sprintf("Failed attempts of %d occurrences announced retries; each is watched until its retry reports.", n)
		}
	case monitors.StatusRunning:
		if runs := m.State.Runs; len(runs) > 0 {
			r.Why = fmt.Sprintf("A run started %s; it counts as stuck after %s.", v.relative(runs[0].StartedAt), plainDuration(m.MaxRuntime()))
			if len(runs) > 1 {
				r.Why = fmt.Sprintf("%d runs are open; the oldest started %s.", len(runs), v.relative(runs[0].StartedAt))
			}
		}
	case monitors.StatusUndeclared:
		r.Why = fmt.Sprintf("Source %q no longer declares it: nothing is expected of it, and it is watched again if declared again.", m.Source)
	case monitors.StatusDown:
		var kinds []string
		for _, k := range monitors.IncidentKinds {
			if _, ok := m.State.Open[k]; ok {
				kinds = append(kinds, string(k))
			}
		}
		r.Why = "Open incident: " + strings.Join(kinds, ", ") + "."
	}
	return r
}

type statusCount struct {
	Status monitors.Status
	Count  int
}

// outageView tells of a recent outage of Vigil itself.
type outageView struct {
	From, To *When
	Lasted   string
}

// outageShownFor is how long after its end an outage of Vigil is shown
// above the monitor list.
const outageShownFor = 24 * time.Hour

type listData struct {
	Outage         *outageView
	Q, Status, Tag string
	Tags           []string
	Counts         []statusCount
	// Total counts the project's monitors, Matched those the filters
	// let through.
	Total, Matched int
	// RowHTML are the rows of the page, drawn (drawRow); nil when the
	// draw is a kept one (Body).
	RowHTML []template.HTML
	// Query is the filter and page as a query string, for the live
	// refresh.
	Query string
	// Page is the page shown, of Pages; From and To number its first and
	// last row among the Matched; PrevURL and NextURL link the pages
	// around it, empty at either end.
	Page, Pages, From, To int
	PrevURL, NextURL      template.URL
	// Body is the rendered content of #monitor-rows, and ETag its tag.
	Body template.HTML
	ETag string
}

// listPage is how many monitors a page of the list shows.
const listPage = 500

// listChrome is about what the list draws around its rows, in bytes.
const listChrome = 8 << 10

// monitorList shows the current project's monitors, filtered by tag,
// status and text, a page of listPage at a time. An htmx request aimed at
// the rows gets only them: the list refreshes itself with it, and sends
// the ETag of the rows it shows (If-None-Match), so that an unchanged list
// is answered with 304 and not drawn again. While the page kept and
// everything else the fragment shows are those of the last draw, and
// nothing in it changed with time since (drawnList), that 304 is sent
// without drawing the rows again.
func (h *Handler) monitorList(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	ctx := c.Request().Context()
	pageNo := 1
	if s := c.QueryParam("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return echo.NewHTTPError(http.StatusBadRequest, "page must be a whole number from 1")
		}
		pageNo = n
	}
	d := &listData{Q: strings.TrimSpace(c.QueryParam("q")), Status: c.QueryParam("status"), Tag: c.QueryParam("tag")}
	key := strings.Join([]string{v.Project.ID, d.Q, d.Status, d.Tag, strconv.Itoa(pageNo)}, "\x00")
	e, err := h.listEntry(ctx, v, d, key, pageNo)
	if err != nil {
		return err
	}
	outages, err := h.store.OutageList(ctx, &monitors.OutageListParams{Limit: 1})
	if err != nil {
		return err
	}
	outageKey := "-"
	if len(outages) > 0 {
		o := outages[0]
		outageKey = o.StartedAt.UTC().Format(time.RFC3339Nano) + "/" + o.EndedAt.UTC().Format(time.RFC3339Nano)
		if shownUntil := o.EndedAt.Add(outageShownFor); v.Now.Before(shownUntil) {
			v.changesAt(shownUntil)
			d.Outage = &outageView{From: v.when(o.StartedAt), To: v.when(o.EndedAt), Lasted: plainDuration(o.Duration().Round(time.Second))}
		}
	}
	rowsOnly := isHTMX(c) && c.Request().Header.Get("HX-Target") == "monitor-rows"
	drawnKey := strings.Join([]string{key, v.Loc.String(), outageKey, h.refreshAttr()}, "\x00")
	if inm := c.Request().Header.Get("If-None-Match"); rowsOnly && inm != "" {
		if dr, ok := h.rowCache.drawn.Get(drawnKey); ok && dr.validFor(e, v.Now) && etagMatches(inm, dr.ETag) {
			c.Response().Header().Set("ETag", dr.ETag)
			return c.NoContent(http.StatusNotModified)
		}
	}
	d.Total, d.Matched, d.Tags = e.Page.Total, e.Page.Matched, e.Page.Tags
	for _, st := range monitors.ListOrder {
		d.Counts = append(d.Counts, statusCount{st, e.Page.Counts[st]})
	}
	d.Page, d.Pages = e.PageNo, e.Pages
	first := (d.Page - 1) * listPage
	d.From, d.To = first+1, first+len(e.Page.Monitors)
	// The last draw of this page, zone, outage and interval, while it
	// holds (drawnList), or else the rows drawn now.
	kept, drawn := h.rowCache.bodies.Get(drawnKey)
	drawn = drawn && kept.validFor(e, v.Now)
	size := 0
	if !drawn {
		for i, m := range e.Page.Monitors {
			html, err := h.drawRow(v, m, e.Page.Versions[i], e.Sparks[i])
			if err != nil {
				return err
			}
			d.RowHTML = append(d.RowHTML, html)
			size += len(html)
		}
	}
	query := func(page int) string {
		qs := url.Values{}
		for k, val := range map[string]string{"q": d.Q, "status": d.Status, "tag": d.Tag} {
			if val != "" {
				qs.Set(k, val)
			}
		}
		if page > 1 {
			qs.Set("page", strconv.Itoa(page))
		}
		return qs.Encode()
	}
	d.Query = query(d.Page)
	// Built from url.Values.Encode: safe in an href as it is.
	if d.Page > 1 {
		prev := query(d.Page - 1)
		if prev == "" {
			prev = "page=1"
		}
		d.PrevURL = template.URL("/?" + prev) //nolint:gosec // an encoded query string
	}
	if d.Page < d.Pages {
		d.NextURL = template.URL("/?" + query(d.Page+1)) //nolint:gosec // an encoded query string
	}
	p := &page{Title: "Monitors", Nav: "monitors", V: v, Data: d, Refresh: h.refreshAttr()}
	if !drawn {
		body, err := h.executeBytes("monitors", "rows-body", p, size+listChrome)
		if err != nil {
			return err
		}
		kept = &drawnList{Sig: e.Sig, At: v.Now, Until: v.Until, ETag: listETag(body, d.Query, p.Refresh), Body: body}
		h.rowCache.bodies.Add(drawnKey, kept)
		h.rowCache.drawn.Add(drawnKey, &drawnList{Sig: kept.Sig, At: kept.At, Until: kept.Until, ETag: kept.ETag})
	}
	d.Body = template.HTML(kept.Body) //nolint:gosec // the output of the escaping template
	d.ETag = kept.ETag
	p.size = len(kept.Body) + listChrome
	if rowsOnly {
		c.Response().Header().Set("ETag", d.ETag)
		if etagMatches(c.Request().Header.Get("If-None-Match"), d.ETag) {
			return c.NoContent(http.StatusNotModified)
		}
		return h.renderFragment(c, http.StatusOK, "monitors", "rows", p)
	}
	return h.render(c, http.StatusOK, "monitors", p)
}

// etagMatches says whether an If-None-Match header names tag.
func etagMatches(header, tag string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimSpace(t)
		if t == tag || t == "W/"+tag || t == "*" {
			return true
		}
	}
	return false
}

// listEntry returns the page pageNo of the list that d's filters ask
// for: kept from an earlier refresh while the store's marker says that
// nothing it shows changed (listEntry.validAt), or else computed by the
// store, which reads again only the rows of the monitors that changed
// since the page kept (MonitorPageParams.Known), with their sparklines.
// A page past the last is the last.
func (h *Handler) listEntry(ctx context.Context, v *viewer, d *listData, key string, pageNo int) (*listEntry, error) {
	// The marker is read before the page: a write between the two makes
	// the kept page newer than its marker, which costs the next refresh a
	// reload, never a stale page.
	marker, err := h.store.MonitorListMarker(ctx, v.Project.ID)
	if err != nil {
		return nil, err
	}
	old, ok := h.rowCache.pages.Get(key)
	if ok && old.validAt(marker, v.Now) {
		return old, nil
	}
	p := &monitors.MonitorPageParams{ProjectID: v.Project.ID, Now: v.Now, Status: monitors.Status(d.Status), Tag: d.Tag,
		Query: d.Q, Limit: listPage, Offset: (pageNo - 1) * listPage}
	if ok {
		// The monitors of the page kept before: those whose rows did not
		// change since are not read again.
		p.Known = make(map[string]monitors.KnownMonitor, len(old.Page.Monitors))
		for i, m := range old.Page.Monitors {
			p.Known[m.ID] = monitors.KnownMonitor{Version: old.Page.Versions[i], Monitor: m}
		}
	}
	page, err := h.store.MonitorListPage(ctx, p)
	if err != nil {
		return nil, err
	}
	e := &listEntry{Marker: marker, At: v.Now, Page: page, Pages: max(1, (page.Matched+listPage-1)/listPage)}
	e.PageNo = min(pageNo, e.Pages)
	if e.PageNo != pageNo {
		p.Offset = (e.PageNo - 1) * listPage
		if e.Page, err = h.store.MonitorListPage(ctx, p); err != nil {
			return nil, err
		}
		e.Pages = max(1, (e.Page.Matched+listPage-1)/listPage)
	}
	if e.Sparks, err = h.sparklines(ctx, v, e.Page); err != nil {
		return nil, err
	}
	e.Sig = e.signature()
	h.rowCache.pages.Add(key, e)
	return e, nil
}

// drawRow returns the row of monitor m, at row version version with
// sparkline spark, as the list draws it for v: kept from an earlier draw
// while nothing in it changed with time since (drawnRow), or else drawn
// (monitorRow, renderRow). Either way it notes in v when the row changes.
func (h *Handler) drawRow(v *viewer, m *monitors.Monitor, version string, spark template.HTML) (template.HTML, error) {
	key := m.ID + "\x00" + version + "\x00" + v.Loc.String()
	if r, ok := h.rowCache.drawnRows.Get(key); ok && holds(r.At, r.Until, v.Now) {
		if !r.Until.IsZero() {
			v.changesAt(r.Until)
		}
		return r.HTML, nil
	}
	// The row's own changes, apart from those of the rest of the draw.
	outer := v.Until
	v.Until = time.Time{}
	html, err := h.renderRow(h.monitorRow(v, m, spark))
	until := v.Until
	v.Until = outer
	if err != nil {
		return "", err
	}
	if !until.IsZero() {
		v.changesAt(until)
	}
	h.rowCache.drawnRows.Add(key, &drawnRow{At: v.Now, Until: until, HTML: html})
	return html, nil
}

// sparklines draws the recent runs of the page's monitors, reading only
// those of monitors whose row version is not among the sparklines kept.
func (h *Handler) sparklines(ctx context.Context, v *viewer, page *monitors.MonitorPage) ([]template.HTML, error) {
	out := make([]template.HTML, len(page.Monitors))
	keys := make([]string, len(page.Monitors))
	var missing []string
	for i, m := range page.Monitors {
		keys[i] = m.ID + "\x00" + page.Versions[i]
		if spark, ok := h.rowCache.sparks.Get(keys[i]); ok {
			out[i] = spark
			continue
		}
		missing = append(missing, m.ID)
	}
	if len(missing) == 0 {
		return out, nil
	}
	runs, err := h.store.RunBriefList(ctx, &monitors.RunListRecentParams{ProjectID: v.Project.ID, MonitorIDs: missing, PerMonitor: sparkRuns})
	if err != nil {
		return nil, err
	}
	for i, m := range page.Monitors {
		if out[i] == "" {
			out[i] = sparkline(runs[m.ID])
			h.rowCache.sparks.Add(keys[i], out[i])
		}
	}
	return out, nil
}

// loadMonitor returns a monitor of one of the viewer's projects, and makes
// that project the current one. A monitor of any other project is
// ErrNotFound.
func (h *Handler) loadMonitor(c echo.Context) (*viewer, *monitors.Monitor, error) {
	v := c.Get(viewerKey).(*viewer)
	id := c.Param("id")
	ctx := c.Request().Context()
	m, err := h.store.MonitorGet(ctx, v.Project.ID, id)
	if err == nil {
		return v, m, nil
	}
	for _, p := range v.Projects {
		if p.ID == v.Project.ID {
			continue
		}
		if m, err2 := h.store.MonitorGet(ctx, p.ID, id); err2 == nil {
			v.Project = p
			h.setCookie(c, "vigil_project", p.ID, int((365 * 24 * time.Hour).Seconds()))
			return v, m, nil
		}
	}
	return nil, nil, err
}

// occurrence is one entry of a monitor's timeline.
type occurrence struct {
	// Anchor is the row's id, which notifications link to.
	Anchor   string
	At       *When
	Outcome  string // a word: succeeded, failed, retried, missed, ...
	Class    string
	Duration string
	Attempt  int
	Detail   string
}

type pingView struct {
	ID       int64
	At       *When
	Kind     monitors.PingKind
	ExitCode *int
	Attempt  int
	RetryAt  *When
	// ScheduledAt is the occurrence the ping's run belongs to, when the
	// job said (scheduled_at).
	ScheduledAt   *When
	Duration      string
	RID           string
	Body          string
	BodyTruncated bool
	RemoteAddr    string
	UserAgent     string
}

type eventView struct {
	At      *When
	Kind    string
	Summary string
}

type incidentView struct {
	ID             string
	Kind           monitors.IncidentKind
	Opened         *When
	Resolved       *When
	Lasted         string
	Summary        string
	ResolveSummary string
	// Held says its notification is held (suppressed, or opened while
	// snoozed or flapping); Suppressed that it opened under Parent's
	// incident; Flapping that it waits for the monitor to be stable.
	Held, Suppressed, Flapping bool
	Parent                     *monitorLink
	Events                     []eventView
	// Deliveries are the attempts to notify, by channel; nil when the
	// server lists none.
	Deliveries []deliveryGroup
	// Notes are what people attached for the status pages, oldest first.
	Notes []noteView
}

type noteView struct {
	ID   string
	Body string
	At   *When
}

type deliveryGroup struct {
	Channel  string
	Attempts []deliveryView
}

type deliveryView struct {
	At      *When
	Event   string
	Attempt int
	Outcome string
	Detail  string
}

type fact struct{ Label, Value string }

type snippet struct{ ID, Title, Note, Code string }

type monitorPageData struct {
	M         *monitors.Monitor
	Row       *monitorRow
	PingURL   string
	SlugURL   string
	Facts     []fact
	Open      []*incidentView
	Timeline  []*occurrence
	Incidents []*incidentView
	Pings     []*pingView
	Snippets  []snippet
	Uptime    *uptimeView
	// MaintenanceUntil is when the maintenance that covers the monitor
	// now ends; nil when none does.
	MaintenanceUntil *When
	// FlappingSince is when the monitor began flapping; nil when it is
	// not.
	FlappingSince *When
	// DependsOn are the monitors it depends on.
	DependsOn []*monitorLink
}

// monitorLink names another monitor, for a link to it.
type monitorLink struct {
	ID, Name string
	Down     bool
}

// monitorPage shows one monitor: its status and why, its ping URLs and
// snippets, and its recent runs, incidents and pings. htmx refreshes the
// live part.
func (h *Handler) monitorPage(c echo.Context) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	d, err := h.monitorPageData(c.Request().Context(), v, m)
	if err != nil {
		return err
	}
	p := &page{Title: m.Name, Nav: "monitors", V: v, Data: d}
	if isHTMX(c) && c.Request().Header.Get("HX-Target") == "monitor-live" {
		return h.renderFragment(c, http.StatusOK, "monitor", "live", p)
	}
	return h.render(c, http.StatusOK, "monitor", p)
}

func (h *Handler) monitorPageData(ctx context.Context, v *viewer, m *monitors.Monitor) (*monitorPageData, error) {
	hist := &monitors.HistoryListParams{ProjectID: v.Project.ID, MonitorID: m.ID, Limit: pageRuns}
	runs, err := h.store.RunList(ctx, hist)
	if err != nil {
		return nil, err
	}
	hist.Limit = pagePings
	pings, err := h.store.PingList(ctx, hist)
	if err != nil {
		return nil, err
	}
	incidents, err := h.store.IncidentList(ctx, &monitors.IncidentListParams{ProjectID: v.Project.ID, MonitorID: m.ID, Limit: pageIncidents})
	if err != nil {
		return nil, err
	}
	d := &monitorPageData{M: m, Row: h.monitorRow(v, m, sparkline(runBriefs(runs))),
		PingURL: h.baseURL + "/ping/" + m.PingKey,
		SlugURL: h.baseURL + "/ping/" + v.Project.PingKey + "/" + m.Slug,
	}
	deliveries, err := h.deliveries(ctx, v, incidents)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(incidents))
	for i, inc := range incidents {
		ids[i] = inc.ID
	}
	notes, err := h.store.IncidentNoteList(ctx, v.Project.ID, ids)
	if err != nil {
		return nil, err
	}
	for _, inc := range incidents {
		iv, err := h.incidentView(ctx, v, inc)
		if err != nil {
			return nil, err
		}
		iv.Deliveries = deliveries[inc.ID]
		if hn, ok := m.State.Held[inc.Kind]; ok && iv.Held && hn.Flapping {
			iv.Flapping = true
		}
		for _, n := range notes[inc.ID] {
			iv.Notes = append(iv.Notes, noteView{ID: n.ID, Body: n.Body, At: v.when(n.CreatedAt)})
		}
		d.Incidents = append(d.Incidents, iv)
		if inc.ResolvedAt == nil {
			d.Open = append(d.Open, iv)
		}
	}
	d.Timeline = timeline(v, runs, incidents)
	for _, pg := range pings {
		pv := &pingView{ID: pg.ID, At: v.when(pg.At), Kind: pg.Kind, ExitCode: pg.ExitCode, Attempt: pg.Attempt,
			RetryAt: v.whenPtr(pg.RetryAt), ScheduledAt: v.whenPtr(pg.ScheduledAt), RID: pg.RID, Body: pg.Body, BodyTruncated: pg.BodyTruncated,
			RemoteAddr: pg.RemoteAddr, UserAgent: pg.UserAgent}
		if pg.DurationMS != nil {
			pv.Duration = shortMillis(*pg.DurationMS)
		}
		d.Pings = append(d.Pings, pv)
	}
	d.Facts, err = h.monitorFacts(ctx, v, m)
	if err != nil {
		return nil, err
	}
	d.Snippets = snippets(h.baseURL, m, d.PingURL)
	ws, err := h.store.MaintenanceWindowList(ctx, v.Project.ID)
	if err != nil {
		return nil, err
	}
	d.MaintenanceUntil = v.whenPtr(monitors.InMaintenanceUntil(ws, m, v.Now))
	for _, id := range m.DependsOn {
		l, err := h.monitorLink(ctx, v, id)
		if err != nil {
			return nil, err
		}
		d.DependsOn = append(d.DependsOn, l)
	}
	if m.State.IsFlapping() {
		d.FlappingSince = v.when(m.State.Flapping)
	}
	if d.Uptime, err = h.uptimeView(ctx, v, m); err != nil {
		return nil, err
	}
	return d, nil
}

func (h *Handler) incidentView(ctx context.Context, v *viewer, inc *monitors.Incident) (*incidentView, error) {
	iv := &incidentView{ID: inc.ID, Kind: inc.Kind, Opened: v.when(inc.OpenedAt), Resolved: v.whenPtr(inc.ResolvedAt),
		Summary: inc.Summary, ResolveSummary: inc.ResolveSummary, Held: inc.Held && inc.ResolvedAt == nil,
		Suppressed: inc.State() == monitors.IncidentStateSuppressed}
	if inc.SuppressedBy != "" {
		parent, err := h.store.IncidentGet(ctx, v.Project.ID, inc.SuppressedBy)
		switch {
		case err == nil:
			if iv.Parent, err = h.monitorLink(ctx, v, parent.MonitorID); err != nil {
				return nil, err
			}
		case !errors.Is(err, monitors.ErrNotFound):
			return nil, err
		}
	}
	end := v.Now
	if inc.ResolvedAt != nil {
		end = *inc.ResolvedAt
	}
	iv.Lasted = plainDuration(end.Sub(inc.OpenedAt).Round(time.Second))
	events, err := h.store.IncidentEventList(ctx, &monitors.IncidentEventListParams{ProjectID: v.Project.ID, IncidentID: inc.ID, Limit: 50})
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		iv.Events = append(iv.Events, eventView{At: v.when(e.At), Kind: strings.TrimPrefix(string(e.Kind), "incident."), Summary: e.Summary})
	}
	return iv, nil
}

// monitorLink names monitor id of the viewer's project; a monitor that is
// gone is named by its ID.
func (h *Handler) monitorLink(ctx context.Context, v *viewer, id string) (*monitorLink, error) {
	m, err := h.store.MonitorGet(ctx, v.Project.ID, id)
	if errors.Is(err, monitors.ErrNotFound) {
		return &monitorLink{ID: id, Name: id}, nil
	}
	if err != nil {
		return nil, err
	}
	return &monitorLink{ID: m.ID, Name: m.Name, Down: m.State.Status == monitors.StatusDown}, nil
}

// deliveries returns the delivery attempts of incidents, grouped by
// channel, when the server lists them.
func (h *Handler) deliveries(ctx context.Context, v *viewer, incidents []*monitors.Incident) (map[string][]deliveryGroup, error) {
	if h.deliv == nil || len(incidents) == 0 {
		return nil, nil
	}
	ids := make([]string, len(incidents))
	for i, inc := range incidents {
		ids[i] = inc.ID
	}
	byIncident, err := h.deliv.IncidentDeliveries(ctx, v.Project.ID, ids)
	if err != nil {
		return nil, err
	}
	channels, err := h.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: v.Project.ID})
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(channels))
	for _, ch := range channels {
		names[ch.ID] = ch.Name + " (" + ch.Kind + ")"
	}
	out := make(map[string][]deliveryGroup, len(byIncident))
	for id, list := range byIncident {
		var groups []deliveryGroup
		for _, d := range list {
			name := cmp.Or(names[d.ChannelID], "a deleted channel")
			i := slices.IndexFunc(groups, func(g deliveryGroup) bool { return g.Channel == name })
			if i < 0 {
				groups = append(groups, deliveryGroup{Channel: name})
				i = len(groups) - 1
			}
			var detail []string
			if d.StatusCode != 0 {
				detail = append(detail, fmt.Sprintf("HTTP %d", d.StatusCode))
			}
			if d.Error != "" {
				detail = append(detail, d.Error)
			}
			if d.NextAttemptAt != nil {
				detail = append(detail, "next try "+relative(*d.NextAttemptAt, v.Now))
			}
			groups[i].Attempts = append(groups[i].Attempts, deliveryView{At: v.when(d.At),
				Event: strings.TrimPrefix(d.Event, "incident."), Attempt: d.Attempt, Outcome: d.Outcome, Detail: strings.Join(detail, "; ")})
		}
		out[id] = groups
	}
	return out, nil
}

// timeline merges runs and missed occurrences, newest first.
func timeline(v *viewer, runs []*monitors.Run, incidents []*monitors.Incident) []*occurrence {
	type item struct {
		at  time.Time
		occ *occurrence
	}
	var items []item
	for _, r := range runs {
		o := &occurrence{Attempt: r.Attempt, Anchor: monitors.RunAnchor(r.Seq)}
		at := time.Time{}
		if r.StartedAt != nil {
			at = *r.StartedAt
		} else if r.FinishedAt != nil {
			at = *r.FinishedAt
		}
		switch r.Outcome {
		case "":
			o.Outcome, o.Class = "running", "running"
			if r.Stuck {
				o.Outcome, o.Class = "running, stuck", "stuck"
			}
			if r.StartedAt != nil {
				o.Duration = "for " + plainDuration(v.Now.Sub(*r.StartedAt).Round(time.Second))
			}
		case monitors.RunSucceeded:
			o.Outcome, o.Class = "succeeded", "ok"
		case monitors.RunFailed:
			o.Outcome, o.Class = "failed", "failed"
			if r.WillRetry {
				o.Outcome, o.Class = "failed, retry announced", "retried"
			}
		case monitors.RunSkipped:
			o.Outcome, o.Class = "skipped", "skipped"
		case monitors.RunCancelled:
			o.Outcome, o.Class = "cancelled", "cancelled"
		case monitors.RunAbandoned:
			o.Outcome, o.Class = "abandoned (never reported its end)", "failed"
		default:
			o.Outcome, o.Class = string(r.Outcome), "skipped"
		}
		if r.DurationMS != nil && r.Outcome != "" {
			o.Duration = shortMillis(*r.DurationMS)
		}
		var detail []string
		if r.ExitCode != nil {
			detail = append(detail, fmt.Sprintf("exit status %d", *r.ExitCode))
		}
		if r.RID != "" {
			detail = append(detail, "run "+r.RID)
		}
		o.Detail = strings.Join(detail, ", ")
		o.At = v.when(at)
		items = append(items, item{at, o})
	}
	for _, inc := range incidents {
		if inc.Kind != monitors.IncidentMissed {
			continue
		}
		items = append(items, item{inc.OpenedAt, &occurrence{At: v.when(inc.OpenedAt), Outcome: "missed", Class: "missed", Detail: inc.Summary}})
	}
	slices.SortStableFunc(items, func(a, b item) int { return b.at.Compare(a.at) })
	out := make([]*occurrence, 0, len(items))
	for _, it := range items {
		out = append(out, it.occ)
	}
	return out
}

func (h *Handler) monitorFacts(ctx context.Context, v *viewer, m *monitors.Monitor) ([]fact, error) {
	words, zone := scheduleWords(m.Schedule)
	sched := upper(words)
	if zone != "" {
		sched += " (" + zone + ")"
	}
	if m.Schedule.Kind != monitors.ScheduleInterval {
		sched += " · " + m.Schedule.Expr
	}
	facts := []fact{
		{"Schedule", sched},
		{"Grace period", plainDuration(m.Grace())},
		{"Max runtime", plainDuration(m.MaxRuntime())},
	}
	if m.DeadlineSeconds > 0 {
		facts = append(facts, fact{"Deadline", plainDuration(m.Deadline()) + " after each occurrence"})
	}
	if p := m.RetryPolicy; p != nil {
		retries := "none"
		if p.MaxRetries > 0 {
			retries = fmt.Sprintf("up to %d", p.MaxRetries)
			if chain, ok := monitors.RetryChain(p); ok {
				retries += ", over " + plainDuration(chain) + " at most"
			}
		}
		if p.Name != "" {
			retries = p.Name + ": " + retries
		}
		facts = append(facts, fact{"Retries", retries})
	}
	alert := map[monitors.AlertOnFailure]string{
		monitors.AlertFinal:        "final failures only (not those the scheduler retries)",
		monitors.AlertEveryAttempt: "every failed attempt",
		monitors.AlertNever:        "never",
	}[m.AlertOnFailure]
	if m.FailureThreshold > 1 {
		alert += fmt.Sprintf(", after %d in a row", m.FailureThreshold)
	}
	facts = append(facts, fact{"Alerts on failure", alert})
	if m.Overlap == monitors.OverlapIgnore {
		facts = append(facts, fact{"Overlapping runs", "ignored"})
	}
	for _, r := range m.RunRuleWords() {
		facts = append(facts, fact{r.Label, capitalize(r.Words)})
	}
	all, err := h.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: v.Project.ID})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ch := range all {
		if slices.Contains(m.Channels, ch.ID) || (len(m.Channels) == 0 && ch.IsDefault) {
			names = append(names, ch.Name)
		}
	}
	channels := strings.Join(names, ", ")
	switch {
	case len(m.Channels) == 0 && len(names) == 0:
		channels = "no one: the project has no default channel"
	case len(m.Channels) == 0:
		channels += " (the project's default channels)"
	}
	facts = append(facts, fact{"Alerts go to", channels})
	if m.Source != "" {
		src := "declared by " + m.Source
		if !m.Discovered {
			src += " (no longer declared: undeclared, not watched, history kept)"
		}
		facts = append(facts, fact{"Source", src})
	}
	return facts, nil
}

func upper(s string) string { return capitalize(s) }

// snippets are ready-to-paste ways of pinging the monitor.
func snippets(baseURL string, m *monitors.Monitor, pingURL string) []snippet {
	cronLine, note := crontabSchedule(m)
	curl := "curl -fsS -m 10 --retry 5"
	return []snippet{
		{ID: "crontab", Title: "crontab + curl", Note: note, Code: fmt.Sprintf(
			"# %s: report success\n%s /path/to/job && %s %s > /dev/null\n\n"+
				"# or report the start, then the exit status (0 succeeds, anything else fails)\n"+
				"%s %s %s/start > /dev/null; /path/to/job; %s %s/$? > /dev/null",
			m.Name, cronLine, curl, pingURL, cronLine, curl, pingURL, curl, pingURL)},
		{ID: "vigil-run", Title: "vigil run", Note: "Reports the start, the exit status and the end of the output, and passes on signals.",
			Code: fmt.Sprintf("vigil run --url %s --key %s -- /path/to/job", baseURL, m.PingKey)},
		{ID: "go-sdk", Title: "Go SDK", Note: "github.com/vigilhq/vigil/sdk: reports the start, then success or the error.",
			Code: fmt.Sprintf("client := sdk.New(%q)\n\nerr := client.Run(ctx, sdk.Key(%q), func(ctx context.Context) error {\n\treturn runTheJob(ctx)\n})", baseURL, m.PingKey)},
		{ID: "curl", Title: "curl", Note: "Add /start, /fail, /log or /0..255 for other kinds of ping; POST a body to keep the job's output.",
			Code: fmt.Sprintf("%s %s", curl, pingURL)},
	}
}

// crontabSchedule returns the schedule part of a crontab line for m, and
// a note when it could only be guessed.
func crontabSchedule(m *monitors.Monitor) (string, string) {
	if m.Schedule.Kind == monitors.ScheduleCron {
		line := m.Schedule.Expr
		if tz := m.Schedule.TZ; tz != "" && tz != "UTC" {
			return "CRON_TZ=" + tz + "\n" + line, "CRON_TZ is understood by cronie and most Linux crons; elsewhere, convert the times to the machine's zone."
		}
		return line, ""
	}
	every := m.Schedule.EverySeconds
	switch {
	case every%86400 == 0 && every == 86400:
		return "0 0 * * *", "An interval monitor: this line runs once a day; any schedule works if it pings at least every day."
	case every%3600 == 0 && every/3600 < 24 && 24%(every/3600) == 0:
		h := every / 3600
		if h == 1 {
			return "0 * * * *", ""
		}
		return fmt.Sprintf("0 */%d * * *", h), ""
	case every%60 == 0 && every/60 < 60 && 60%(every/60) == 0:
		return fmt.Sprintf("*/%d * * * *", every/60), ""
	}
	return "* * * * *", "Adjust the schedule: the monitor expects a ping every " + plainDuration(time.Duration(every)*time.Second) + "."
}

// monitorPause and monitorResume pause and resume a monitor as a person,
// as the API does: a pause is the person field "paused", which the
// monitor's source declaring it again leaves alone.
func (h *Handler) monitorPause(c echo.Context) error {
	return h.pauseResume(c, true, "Paused. It records pings but judges nothing until resumed.")
}

func (h *Handler) monitorResume(c echo.Context) error {
	return h.pauseResume(c, false, "Resumed. It starts afresh: nothing is expected until its next ping.")
}

func (h *Handler) pauseResume(c echo.Context, paused bool, msg string) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	if _, _, err := h.manage.MonitorSetPaused(c.Request().Context(), v.Project.ID, m.ID, paused); err != nil {
		return err
	}
	h.flash(c, msg)
	return redirect(c, "/monitors/"+m.ID)
}

func (h *Handler) monitorDelete(c echo.Context) error {
	v, m, err := h.loadMonitor(c)
	if err != nil {
		return err
	}
	if err := h.manage.MonitorDelete(c.Request().Context(), v.Project.ID, m.ID); err != nil {
		return err
	}
	h.log.Info("monitor deleted from the dashboard", "monitor_id", m.ID, "user_id", v.User.ID)
	h.flash(c, fmt.Sprintf("Deleted %s and its history.", m.Name))
	return redirect(c, "/")
}
