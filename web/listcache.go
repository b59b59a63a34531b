package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/vigilhq/vigil/monitors"
)

// rowCacheSize bounds the rendered rows the monitor list keeps: a few
// pages of the largest lists, a few MB.
const rowCacheSize = 4096

// rowCache keeps the monitor list's rendered rows by everything a row
// shows (rowKey), so that a refresh renders through the template only the
// rows that changed since the last one: the others cost a map look-up. A
// row's text changes with time (its relative times), and then its key
// does too.
//
// It also keeps, beside the rows, the sparklines by monitor row version
// (sparks: a row whose version did not change has the same runs, see
// monitors.MonitorPage.Versions, so its runs are not read again), and the
// last pages of the list as the store computed them (pages), each with
// the store's marker at the time: while the marker is the same and no
// monitor turned late, a refresh draws the page again from what it keeps
// and reads nothing but the marker. The last draws of each page (drawn)
// and of each row (drawnRows) are kept with the time in which they hold,
// so that a refresh does not draw again what did not change.
type rowCache struct {
	rows      *lru.Cache[string, template.HTML]
	sparks    *lru.Cache[string, template.HTML]
	pages     *lru.Cache[string, *listEntry]
	drawn     *lru.Cache[string, *drawnList]
	bodies    *lru.Cache[string, *drawnList]
	drawnRows *lru.Cache[string, *drawnRow]
}

// listPagesKept bounds the pages of the list kept: each holds up to
// listPage monitors.
const listPagesKept = 32

func newRowCache() (*rowCache, error) {
	rows, err := lru.New[string, template.HTML](rowCacheSize)
	if err != nil {
		return nil, fmt.Errorf("web: row cache: %w", err)
	}
	sparks, err := lru.New[string, template.HTML](rowCacheSize)
	if err != nil {
		return nil, fmt.Errorf("web: sparkline cache: %w", err)
	}
	pages, err := lru.New[string, *listEntry](listPagesKept)
	if err != nil {
		return nil, fmt.Errorf("web: list page cache: %w", err)
	}
	drawn, err := lru.New[string, *drawnList](listDrawsKept)
	if err != nil {
		return nil, fmt.Errorf("web: list draw cache: %w", err)
	}
	bodies, err := lru.New[string, *drawnList](listBodiesKept)
	if err != nil {
		return nil, fmt.Errorf("web: list body cache: %w", err)
	}
	drawnRows, err := lru.New[string, *drawnRow](rowCacheSize)
	if err != nil {
		return nil, fmt.Errorf("web: row draw cache: %w", err)
	}
	return &rowCache{rows: rows, sparks: sparks, pages: pages, drawn: drawn, bodies: bodies, drawnRows: drawnRows}, nil
}

// purge forgets everything kept.
func (c *rowCache) purge() {
	c.rows.Purge()
	c.sparks.Purge()
	c.pages.Purge()
	c.drawn.Purge()
	c.bodies.Purge()
	c.drawnRows.Purge()
}

// listDrawsKept bounds the draws of the list remembered: a few viewers'
// zones for each page kept.
const listDrawsKept = 4 * listPagesKept

// listBodiesKept bounds the draws of the list kept with their bytes (a
// page of listPage rows is a few hundred KB): the most recent ones.
const listBodiesKept = 16

// drawnList is the last draw of a page of the list for one zone, outage
// note and refresh interval (its key): the content of the page kept it
// drew (Sig, listEntry.Sig), at At, its ETag, and in the cache of the
// most recent draws (rowCache.bodies) its bytes (Body; nil in the other). The fragment is a function of those
// and of the time, and it stays the same from At until Until
// (viewer.Until: the first instant at which a relative time, a status by
// the expected time or anything else drawn changes; zero for never):
// while the page kept has the same content, a request in that time whose
// If-None-Match names ETag is answered 304 without drawing, and any
// other is answered Body.
type drawnList struct {
	Sig       string
	At, Until time.Time
	ETag      string
	Body      []byte
}

// validFor says whether a draw of e at now would be d's.
func (d *drawnList) validFor(e *listEntry, now time.Time) bool {
	return d.Sig == e.Sig && holds(d.At, d.Until, now)
}

// holds says whether a draw made at at, which stays the same until
// until (zero for never), is still the same at now.
func holds(at, until, now time.Time) bool {
	return !now.Before(at) && (until.IsZero() || now.Before(until))
}

// drawnRow is the last draw of a monitor's row at one version of its row
// (monitors.MonitorPage.Versions) in one zone, made at At and the same
// until Until (zero for never), as drawnList is for the page.
type drawnRow struct {
	At, Until time.Time
	HTML      template.HTML
}

// listEntry is a page of the list as the store computed it at At, with
// the sparkline of each of its monitors, and the store's marker read
// before it was computed.
type listEntry struct {
	Marker string
	At     time.Time
	Page   *monitors.MonitorPage
	// PageNo is the page it is, of Pages.
	PageNo, Pages int
	Sparks        []template.HTML
	// Sig is a hash of everything of the entry that the list draws (see
	// signature): two entries with one Sig draw the same.
	Sig string
}

// signature hashes what a draw of e reads of it: the counts, the tags,
// the totals, the page and the pages, and each monitor by its ID and row
// version (a monitor's row at one version is the same row, and its
// sparkline the same runs) with its sparkline. A field of listEntry or
// monitors.MonitorPage that the list draws belongs here
// (TestListSignatureCoversTheDraw).
func (e *listEntry) signature() string {
	h := sha256.New()
	put := func(s string) {
		h.Write([]byte(s)) //nolint:errcheck // a hash never fails
		h.Write([]byte{0}) //nolint:errcheck // a hash never fails
	}
	put(fmt.Sprint(e.PageNo, e.Pages, e.Page.Total, e.Page.Matched))
	for _, st := range monitors.ListOrder {
		put(string(st) + "=" + strconv.Itoa(e.Page.Counts[st]))
	}
	put(strings.Join(e.Page.Tags, "\x01"))
	for i, m := range e.Page.Monitors {
		put(m.ID)
		put(e.Page.Versions[i])
		put(string(e.Sparks[i]))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// validAt says whether e is still what the store would compute at now
// when its marker is marker: the same rows and runs, and no monitor
// turned late since (the only change of the list that time alone makes).
func (e *listEntry) validAt(marker string, now time.Time) bool {
	return e.Marker == marker && holds(e.At, e.Page.LateAt, now)
}

// renderRow returns row r as the "row" template of the monitors page draws
// it, from the cache when an identical row was drawn before.
func (h *Handler) renderRow(r *monitorRow) (template.HTML, error) {
	key := r.key()
	if html, ok := h.rowCache.rows.Get(key); ok {
		return html, nil
	}
	var buf bytes.Buffer
	if err := h.pages.sets["monitors"].ExecuteTemplate(&buf, "row", r); err != nil {
		return "", fmt.Errorf("render row %s: %w", r.ID, err)
	}
	html := template.HTML(buf.String()) //nolint:gosec // the output of the escaping template
	h.rowCache.rows.Add(key, html)
	return html, nil
}

// key is every field of the row that the "row" template shows, each
// followed by a NUL, which no field holds: two rows with one key draw the
// same HTML. A field added to monitorRow belongs here
// (TestRowKeyCoversEveryField).
func (r *monitorRow) key() string {
	var b strings.Builder
	b.Grow(256 + len(r.Spark) + len(r.Why))
	put := func(s ...string) {
		for _, v := range s {
			b.WriteString(v)
			b.WriteByte(0)
		}
	}
	when := func(w *When) {
		if w == nil {
			put("-")
			return
		}
		past := "f"
		if w.Past {
			past = "p"
		}
		put(w.ISO, w.Text, w.Zone, w.Rel, w.Full, past)
	}
	put(r.ID, r.Name, r.Slug, strings.Join(r.Tags, "\x01"), string(r.Status), r.Schedule, r.Zone)
	when(r.Next)
	put(r.NextLabel)
	when(r.LastPing)
	put(string(r.LastKind), string(r.Spark), r.Why)
	for _, a := range r.Advice {
		put(a.Field, a.Text)
	}
	when(r.Snoozed)
	return b.String()
}

// listETag is the entity tag of a rendered fragment: a hash of its bytes
// and of the attributes around them (extra), so that equal fragments have
// equal tags.
func listETag(body []byte, extra ...string) string {
	h := sha256.New()
	for _, e := range extra {
		h.Write([]byte(e)) //nolint:errcheck // a hash never fails
		h.Write([]byte{0}) //nolint:errcheck // a hash never fails
	}
	h.Write(body) //nolint:errcheck // a hash never fails
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}
