package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/singleflight"

	"github.com/vigilhq/vigil/monitors"
)

// Public status pages: /status/{slug} (HTML, no JavaScript),
// /status/{slug}.json (the same page) and /status/{slug}/feed.atom (its
// incidents). They need no sign-in and set no cookie, so they show only
// what a person chose to make public: the page's title, each monitor's
// public name, its state in words, its uptime strip and its recent
// incidents with their times and notes. Never a monitor's ID, slug, ping
// key or URL, output, tags, summary or, when a public name is given, its
// own name.
//
// # Caching
//
// A page is built once per StatusPageTTL per replica, whatever the load:
// the first request after the TTL builds it (concurrent requests for the
// same slug wait for that one build) and every request until the next
// build is served from memory, with an ETag and a Last-Modified for
// conditional requests. A change made on the dashboard or through the API
// of this replica (StatusPagesChanged) drops its entries at once; other
// changes (on another replica, new pings and incidents) show within
// StatusPageTTL. Unknown and unpublished slugs are cached the same way and
// answer the same 404, so that probing slugs costs little and tells
// nothing.

// Defaults of the status pages.
const (
	// StatusPageTTLDefault is how long a built status page is served
	// before it is built again (Config.StatusPageTTL).
	StatusPageTTLDefault = 10 * time.Second
	// statusCacheMax bounds the cached slugs; beyond it expired entries
	// go first, then all.
	statusCacheMax = 1024
	// statusIncidentsMax is how many recent incidents each monitor shows.
	statusIncidentsMax = 10
	// statusFeedMax is how many incidents the feed carries.
	statusFeedMax = 50
	// statusBuildTimeout bounds a build of a page.
	statusBuildTimeout = 30 * time.Second
)

// publicStatus is a monitor's state as the public reads it: words and a
// colour (a status class of app.css).
func publicStatus(st monitors.Status, open []monitors.IncidentKind) (words, class string) {
	switch st {
	case monitors.StatusUp:
		return "Operational", "up"
	case monitors.StatusRunning:
		return "Operational, running now", "running"
	case monitors.StatusLate:
		return "Late", "late"
	case monitors.StatusRetrying:
		return "Retrying after a failure", "retrying"
	case monitors.StatusDown:
		if len(open) > 0 {
			return "Down: " + strings.ToLower(incidentWords(open[0])), "down"
		}
		return "Down", "down"
	case monitors.StatusPaused:
		return "Paused", "paused"
	case monitors.StatusNew:
		return "No runs yet", "new"
	}
	return "Not watched", "paused"
}

// incidentWords names an incident kind for the public.
func incidentWords(k monitors.IncidentKind) string {
	switch k {
	case monitors.IncidentMissed:
		return "Missed run"
	case monitors.IncidentFailed:
		return "Failed run"
	case monitors.IncidentStuck:
		return "Run stuck"
	case monitors.IncidentDeadline:
		return "Not done by its deadline"
	case monitors.IncidentOverlap:
		return "Overlapping runs"
	case monitors.IncidentTooFast:
		return "Run ended too soon"
	case monitors.IncidentEarly:
		return "Run started early"
	case monitors.IncidentTooOften:
		return "Ran more often than scheduled"
	}
	return capitalize(strings.ReplaceAll(string(k), "_", " "))
}

// publicPage is a built status page: what the HTML, the JSON and the feed
// all show. Its JSON form is /status/{slug}.json.
type publicPage struct {
	Title    string          `json:"title"`
	URL      string          `json:"url"`
	Status   string          `json:"status"` // ok, degraded or down
	Words    string          `json:"status_text"`
	Sections []publicSection `json:"sections"`
	// feed is every incident shown, newest first; changed is when a
	// person last changed the page.
	feed    []*publicIncident
	changed time.Time
}

type publicSection struct {
	Heading  string          `json:"heading,omitempty"`
	Monitors []publicMonitor `json:"monitors"`
}

type publicMonitor struct {
	Name      string            `json:"name"`
	Status    string            `json:"status"`
	Words     string            `json:"status_text"`
	Uptime    string            `json:"uptime_90_days"`
	Days      []uptimeCell      `json:"days"`
	Incidents []*publicIncident `json:"incidents"`
	Anchor    string            `json:"-"`
}

type publicIncident struct {
	// ID is the feed's ID of the incident: a hash of the page's slug and
	// the incident's ID, which it does not show.
	ID         string       `json:"id"`
	Monitor    string       `json:"monitor"`
	Kind       string       `json:"kind"`
	Title      string       `json:"title"`
	OpenedAt   time.Time    `json:"opened_at"`
	ResolvedAt *time.Time   `json:"resolved_at"`
	Duration   string       `json:"duration"`
	Notes      []publicNote `json:"notes"`
	Updated    time.Time    `json:"updated_at"`
	Opened     string       `json:"-"`
	Resolved   string       `json:"-"`
	incidentID string
}

type publicNote struct {
	Body string    `json:"body"`
	At   time.Time `json:"at"`
	When string    `json:"-"`
}

// MarshalJSON writes a day of the strip as the JSON of a status page
// shows it.
func (c uptimeCell) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Date  string `json:"date"`
		Class string `json:"class"`
		Label string `json:"label"`
	}{c.Date, c.Class, c.Label})
}

func publicTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// buildStatusPage reads what page p shows at now.
func (h *Handler) buildStatusPage(ctx context.Context, p *monitors.StatusPage, now time.Time) (*publicPage, error) {
	all, err := h.store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: p.ProjectID, Now: now})
	if err != nil {
		return nil, fmt.Errorf("list monitors of status page %s: %w", p.Slug, err)
	}
	out := &publicPage{Title: p.Title, URL: h.baseURL + "/status/" + p.Slug, Sections: []publicSection{}, changed: p.UpdatedAt}
	since := now.AddDate(0, 0, -uptimeStripDays)
	var incidentIDs []string
	down, degraded := false, false
	n := 0
	for _, sec := range p.Sections(all) {
		ps := publicSection{Heading: sec.Heading}
		for _, sm := range sec.Monitors {
			m := sm.Monitor
			n++
			ins, err := h.store.IncidentList(ctx, &monitors.IncidentListParams{ProjectID: p.ProjectID, MonitorID: m.ID,
				Since: &since, Limit: statusIncidentsMax})
			if err != nil {
				return nil, fmt.Errorf("incidents of monitor %s: %w", m.ID, err)
			}
			var open []monitors.IncidentKind
			pm := publicMonitor{Name: sm.Name, Incidents: []*publicIncident{}, Anchor: fmt.Sprintf("m%d", n)}
			for _, in := range ins {
				pi := &publicIncident{ID: publicID(p.Slug, in.ID), Monitor: sm.Name, Kind: string(in.Kind),
					Title: incidentWords(in.Kind), OpenedAt: in.OpenedAt.UTC(), Opened: publicTime(in.OpenedAt),
					Notes: []publicNote{}, Updated: in.OpenedAt.UTC(), incidentID: in.ID}
				if in.ResolvedAt != nil {
					r := in.ResolvedAt.UTC()
					pi.ResolvedAt, pi.Resolved, pi.Updated = &r, publicTime(r), r
					pi.Duration = monitors.PlainDuration(r.Sub(in.OpenedAt).Round(time.Second))
				} else {
					open = append(open, in.Kind)
					pi.Duration = monitors.PlainDuration(now.Sub(in.OpenedAt).Round(time.Second)) + " so far"
				}
				pm.Incidents = append(pm.Incidents, pi)
				incidentIDs = append(incidentIDs, in.ID)
			}
			st := m.StatusAt(now)
			pm.Words, pm.Status = publicStatus(st, open)
			switch pm.Status {
			case "down":
				down = true
			case "late", "retrying":
				degraded = true
			}
			u, err := monitors.LoadUptime(ctx, h.store, m, now, uptimeStripDays)
			if err != nil {
				return nil, fmt.Errorf("uptime of monitor %s: %w", m.ID, err)
			}
			uv := newUptimeView(u)
			pm.Days = uv.Cells
			for _, w := range uv.Windows {
				if w.Days == uptimeStripDays {
					pm.Uptime = w.Words
				}
			}
			ps.Monitors = append(ps.Monitors, pm)
		}
		out.Sections = append(out.Sections, ps)
	}
	// Notes, in one read, by the incident IDs the page holds.
	notes, err := h.store.IncidentNoteList(ctx, p.ProjectID, incidentIDs)
	if err != nil {
		return nil, fmt.Errorf("notes of status page %s: %w", p.Slug, err)
	}
	for si := range out.Sections {
		for mi := range out.Sections[si].Monitors {
			pm := &out.Sections[si].Monitors[mi]
			for _, pi := range pm.Incidents {
				for _, nt := range notes[pi.incidentID] {
					pi.Notes = append(pi.Notes, publicNote{Body: nt.Body, At: nt.CreatedAt.UTC(), When: publicTime(nt.CreatedAt)})
					if nt.CreatedAt.After(pi.Updated) {
						pi.Updated = nt.CreatedAt.UTC()
					}
				}
				out.feed = append(out.feed, pi)
			}
		}
	}
	slices.SortStableFunc(out.feed, func(a, b *publicIncident) int { return b.OpenedAt.Compare(a.OpenedAt) })
	switch {
	case down:
		out.Status, out.Words = "down", "Some jobs are down"
	case degraded:
		out.Status, out.Words = "degraded", "Some jobs are late or retrying"
	default:
		out.Status, out.Words = "ok", "All jobs operational"
	}
	return out, nil
}

// publicID names an incident on the page without showing its ID.
func publicID(slug, incidentID string) string {
	sum := sha256.Sum256([]byte(slug + "\x00" + incidentID))
	return hex.EncodeToString(sum[:10])
}

// Atom (RFC 4287) of a page's incidents.
type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	ID      string      `xml:"id"`
	Title   string      `xml:"title"`
	Updated string      `xml:"updated"`
	Author  atomPerson  `xml:"author"`
	Links   []atomLink  `xml:"link"`
	Entries []atomEntry `xml:"entry"`
}

type atomPerson struct {
	Name string `xml:"name"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Body string `xml:",chardata"`
}

type atomEntry struct {
	ID        string   `xml:"id"`
	Title     string   `xml:"title"`
	Updated   string   `xml:"updated"`
	Published string   `xml:"published"`
	Link      atomLink `xml:"link"`
	Content   atomText `xml:"content"`
}

// atom writes the page's incidents as an Atom feed, newest first.
func (pp *publicPage) atom() ([]byte, error) {
	f := atomFeed{ID: pp.URL, Title: pp.Title + ": incidents", Author: atomPerson{Name: pp.Title},
		Links: []atomLink{{Rel: "self", Type: "application/atom+xml", Href: pp.URL + "/feed.atom"}, {Rel: "alternate", Type: "text/html", Href: pp.URL}}}
	updated := pp.changed.UTC()
	for i, in := range pp.feed {
		if i == statusFeedMax {
			break
		}
		updated = maxTime(updated, in.Updated)
		title := in.Monitor + ": " + strings.ToLower(in.Title)
		var body strings.Builder
		fmt.Fprintf(&body, "%s: %s since %s.", in.Monitor, in.Title, in.Opened)
		if in.ResolvedAt != nil {
			fmt.Fprintf(&body, " Resolved %s, after %s.", in.Resolved, in.Duration)
			title += " (resolved)"
		} else {
			fmt.Fprintf(&body, " Ongoing: %s.", in.Duration)
		}
		for _, n := range in.Notes {
			fmt.Fprintf(&body, "\n\n%s: %s", n.When, n.Body)
		}
		f.Entries = append(f.Entries, atomEntry{ID: pp.URL + "#incident-" + in.ID, Title: title,
			Updated: in.Updated.Format(time.RFC3339), Published: in.OpenedAt.Format(time.RFC3339),
			Link:    atomLink{Rel: "alternate", Type: "text/html", Href: pp.URL + "#incident-" + in.ID},
			Content: atomText{Type: "text", Body: body.String()}})
	}
	f.Updated = updated.UTC().Format(time.RFC3339)
	b, err := xml.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode feed: %w", err)
	}
	return append([]byte(xml.Header), b...), nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// statusBody is one rendering of a built page, as is and gzipped (most
// of a page is its strips, which compress well).
type statusBody struct {
	body, gz     []byte
	etag         string
	lastModified time.Time
}

// statusEntry is a cached slug: its three renderings, or nothing for an
// unknown or unpublished slug.
type statusEntry struct {
	built time.Time
	found bool
	// projectID and pageID say which entry a dashboard change drops.
	projectID, pageID string
	html, json, atom  statusBody
}

// statusCache holds built pages by slug (see the package comment on
// caching).
type statusCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]*statusEntry
	group   singleflight.Group
}

func newStatusCache(ttl time.Duration) *statusCache {
	if ttl <= 0 {
		ttl = StatusPageTTLDefault
	}
	return &statusCache{ttl: ttl, entries: map[string]*statusEntry{}}
}

// get returns the fresh entry of slug, building it with build when there
// is none; one build per slug at a time.
func (sc *statusCache) get(slug string, now time.Time, build func(old *statusEntry) (*statusEntry, error)) (*statusEntry, error) {
	sc.mu.Lock()
	old := sc.entries[slug]
	sc.mu.Unlock()
	if old != nil && now.Sub(old.built) < sc.ttl && !now.Before(old.built) {
		return old, nil
	}
	v, err, _ := sc.group.Do(slug, func() (any, error) {
		e, err := build(old)
		if err != nil {
			return nil, err
		}
		sc.mu.Lock()
		defer sc.mu.Unlock()
		if len(sc.entries) >= statusCacheMax {
			for k, x := range sc.entries {
				if now.Sub(x.built) >= sc.ttl {
					delete(sc.entries, k)
				}
			}
			if len(sc.entries) >= statusCacheMax {
				clear(sc.entries)
			}
		}
		sc.entries[slug] = e
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*statusEntry), nil
}

// StatusPagesChanged forgets the cached public pages of the project, and
// the answers cached for the slugs (an unknown slug's 404 among them), so
// that the next request builds them anew: the API calls it on every change
// of a status page or an incident note, through server's wiring.
func (h *Handler) StatusPagesChanged(projectID string, slugs ...string) {
	h.statusCache.dropProject(projectID)
	h.statusCache.drop("", slugs...)
}

// drop forgets the entries of a page (by ID) and of slugs, so that the
// next request builds them anew.
func (sc *statusCache) drop(pageID string, slugs ...string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for k, e := range sc.entries {
		if pageID != "" && e.pageID == pageID || slices.Contains(slugs, k) {
			delete(sc.entries, k)
		}
	}
}

// dropProject forgets the entries of every page of a project: a note
// changed what they show.
func (sc *statusCache) dropProject(projectID string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for k, e := range sc.entries {
		if e.projectID == projectID {
			delete(sc.entries, k)
		}
	}
}

func newStatusBody(b []byte, old statusBody, now time.Time) (statusBody, error) {
	sum := sha256.Sum256(b)
	etag := hex.EncodeToString(sum[:12])
	if old.etag == etag {
		return old, nil // the same content: as old as it was
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(b); err != nil {
		return statusBody{}, fmt.Errorf("gzip status page: %w", err)
	}
	if err := zw.Close(); err != nil {
		return statusBody{}, fmt.Errorf("gzip status page: %w", err)
	}
	return statusBody{body: b, gz: gz.Bytes(), etag: etag, lastModified: now.UTC().Truncate(time.Second)}, nil
}

// statusView is what statuspage.html gets.
type statusView struct {
	*publicPage
	FeedURL string
	JSONURL string
	CSS     string
}

// buildStatusEntry builds and renders the page with slug at now.
func (h *Handler) buildStatusEntry(ctx context.Context, slug string, now time.Time, old *statusEntry) (*statusEntry, error) {
	e := &statusEntry{built: now}
	p, err := h.store.StatusPageGetBySlug(ctx, slug)
	if errors.Is(err, monitors.ErrNotFound) || err == nil && !p.Published {
		return e, nil
	}
	if err != nil {
		return nil, err
	}
	pp, err := h.buildStatusPage(ctx, p, now)
	if err != nil {
		return nil, err
	}
	if old == nil || !old.found {
		old = &statusEntry{}
	}
	e.found, e.projectID, e.pageID = true, p.ProjectID, p.ID

	var buf bytes.Buffer
	view := &statusView{publicPage: pp, FeedURL: "/status/" + slug + "/feed.atom",
		JSONURL: "/status/" + slug + ".json", CSS: "/static/app.css?v=" + h.pages.versions["app.css"]}
	if err := h.pages.sets["statuspage"].ExecuteTemplate(&buf, "statuspage.html", view); err != nil {
		return nil, fmt.Errorf("render status page %s: %w", slug, err)
	}
	if e.html, err = newStatusBody(buf.Bytes(), old.html, now); err != nil {
		return nil, err
	}
	// Nothing of the build's own time is in the bodies: an ETag (and its
	// Last-Modified) changes only when what the page shows does.
	js, err := json.MarshalIndent(pp, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode status page %s: %w", slug, err)
	}
	if e.json, err = newStatusBody(append(js, '\n'), old.json, now); err != nil {
		return nil, err
	}
	feed, err := pp.atom()
	if err != nil {
		return nil, err
	}
	if e.atom, err = newStatusBody(feed, old.atom, now); err != nil {
		return nil, err
	}
	return e, nil
}

// statusHeaders are the headers of every public status answer: cacheable
// by anyone for the TTL, no cookie, nothing that runs.
func (h *Handler) statusHeaders(c echo.Context) {
	hd := c.Response().Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(h.statusCache.ttl.Seconds())))
	hd.Set("Access-Control-Allow-Origin", "*")
}

// statusPublic answers GET /status/{slug} and /status/{slug}.json.
func (h *Handler) statusPublic(c echo.Context) error {
	slug := c.Param("slug")
	if s, ok := strings.CutSuffix(slug, ".json"); ok {
		return h.serveStatus(c, s, "json")
	}
	return h.serveStatus(c, slug, "html")
}

// statusFeed answers GET /status/{slug}/feed.atom.
func (h *Handler) statusFeed(c echo.Context) error { return h.serveStatus(c, c.Param("slug"), "atom") }

func (h *Handler) serveStatus(c echo.Context, slug, form string) error {
	h.statusHeaders(c)
	now := h.now()
	var e *statusEntry
	if statusSlugOK(slug) {
		var err error
		// The build serves every request waiting for it: one that goes
		// away does not cancel it for the others.
		e, err = h.statusCache.get(slug, now, func(old *statusEntry) (*statusEntry, error) {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), statusBuildTimeout)
			defer cancel()
			return h.buildStatusEntry(ctx, slug, now, old)
		})
		if err != nil {
			h.log.Error("status page failed", "slug", slug, "err", err)
			c.Response().Header().Set("Cache-Control", "no-store")
			return c.String(http.StatusInternalServerError, "This status page cannot be shown right now. Try again in a moment.")
		}
	}
	if e == nil || !e.found {
		return c.String(http.StatusNotFound, "No such status page.")
	}
	b, ctype := e.html, "text/html; charset=utf-8"
	switch form {
	case "json":
		b, ctype = e.json, "application/json"
	case "atom":
		b, ctype = e.atom, "application/atom+xml; charset=utf-8"
	}
	hd := c.Response().Header()
	hd.Set("Content-Type", ctype)
	hd.Add("Vary", "Accept-Encoding")
	body, etag := b.body, `"`+b.etag+`"`
	if acceptsGzip(c.Request()) {
		body, etag = b.gz, `"`+b.etag+`-gzip"`
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("ETag", etag)
	http.ServeContent(c.Response(), c.Request(), "", b.lastModified, bytes.NewReader(body))
	return nil
}

// acceptsGzip reports whether the request accepts a gzipped answer.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
				return true
			}
		}
	}
	return false
}

// statusSlugOK reports whether slug could name a page, so that others are
// answered without a lookup or a cache entry.
func statusSlugOK(slug string) bool {
	p := monitors.StatusPage{Slug: slug, Title: "x"}
	return p.Validate() == nil
}
