package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
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
// and reads nothing but the marker.
type rowCache struct {
	rows   *lru.Cache[string, template.HTML]
	sparks *lru.Cache[string, template.HTML]
	pages  *lru.Cache[string, *listEntry]
	drawn  *lru.Cache[string, *drawnList]
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
	return &rowCache{rows: rows, sparks: sparks, pages: pages, drawn: drawn}, nil
}

// purge forgets everything kept.
func (c *rowCache) purge() {
	c.rows.Purge()
	c.sparks.Purge()
	c.pages.Purge()
	c.drawn.Purge()
}

// listDrawsKept bounds the draws of the list remembered: a few viewers'
// zones for each page kept.
const listDrawsKept = 4 * listPagesKept

// drawnList is the last draw of a page of the list for one zone, outage
// note and refresh interval (its key): the page kept it drew (Entry), at
// At, and its ETag. The fragment is a function of those and of the time,
// and it stays the same from At until Until (viewer.Until: the first
// instant at which a relative time, a status by the expected time or
// anything else drawn changes; zero for never): while the page kept is
// still Entry, a request in that time whose If-None-Match names ETag is
// answered 304 without drawing.
type drawnList struct {
	Entry     *listEntry
	At, Until time.Time
	ETag      string
}

// validFor says whether a draw of e at now would be d's.
func (d *drawnList) validFor(e *listEntry, now time.Time) bool {
	return d.Entry == e && !now.Before(d.At) && (d.Until.IsZero() || now.Before(d.Until))
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
}

// validAt says whether e is still what the store would compute at now
// when its marker is marker: the same rows and runs, and no monitor
// turned late since (the only change of the list that time alone makes).
func (e *listEntry) validAt(marker string, now time.Time) bool {
	return e.Marker == marker && !now.Before(e.At) && (e.Page.LateAt.IsZero() || now.Before(e.Page.LateAt))
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
