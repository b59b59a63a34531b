package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/healthchecks"
	"github.com/vigilhq/vigil/monitors"
)

// hcPingLimit is how many pings GET .../pings/ returns, newest first, as
// Healthchecks returns the newest 100 or 1000.
const hcPingLimit = 1000

// hcFlipIncidents is how many of a check's newest incidents its flips are
// made of.
const hcFlipIncidents = 1000

// hcPing is a ping as Healthchecks' API shows it.
type hcPing struct {
	Type       string   `json:"type"`
	Date       string   `json:"date"`
	N          int64    `json:"n"`
	RemoteAddr string   `json:"remote_addr"`
	UA         string   `json:"ua"`
	RID        *string  `json:"rid"`
	ExitStatus *int     `json:"exitstatus,omitempty"`
	Duration   *float64 `json:"duration,omitempty"`
	BodyURL    *string  `json:"body_url"`
}

// hcPingType names a ping's kind as Healthchecks does: a skip, which
// changes nothing but says the job is alive, is "ign"; a cancel, which
// closes a run without success or failure, is "log".
func hcPingType(k monitors.PingKind) string {
	switch k {
	case monitors.PingSkip:
		return "ign"
	case monitors.PingCancel:
		return "log"
	}
	return string(k)
}

// hcListPings answers GET /api/vN/checks/{uuid}/pings/. A ping's n is its
// ID in Vigil: unique and increasing, though not numbered from 1.
func (h *Handler) hcListPings(c echo.Context, rq *hcRequest) error {
	m, err := h.hcFind(c, rq, false)
	if err != nil {
		return err
	}
	ps, err := h.store.PingList(c.Request().Context(), &monitors.HistoryListParams{
		ProjectID: rq.key.ProjectID, MonitorID: m.ID, Limit: hcPingLimit})
	if err != nil {
		return err
	}
	out := make([]hcPing, 0, len(ps))
	for _, p := range ps {
		j := hcPing{Type: hcPingType(p.Kind), Date: hcTimeMicro(p.At), N: p.ID, RemoteAddr: p.RemoteAddr, UA: p.UserAgent,
			ExitStatus: p.ExitCode}
		if p.RID != "" {
			rid := p.RID
			j.RID = &rid
		}
		if p.DurationMS != nil {
			d := float64(*p.DurationMS) / 1000
			j.Duration = &d
		}
		if p.Body != "" {
			u := fmt.Sprintf("%s/pings/%d/body", h.hcCheckURL(rq.v, m.PingKey), p.ID)
			j.BodyURL = &u
		}
		out = append(out, j)
	}
	return c.JSON(http.StatusOK, map[string][]hcPing{"pings": out})
}

// hcPingBody answers GET /api/vN/checks/{uuid}/pings/{n}/body: the body,
// verbatim, as text/plain; 404 when the ping has none.
func (h *Handler) hcPingBody(c echo.Context, rq *hcRequest) error {
	m, err := h.hcFind(c, rq, false)
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(c.Param("n"), 10, 64)
	if err != nil || n < 1 {
		return hcErrorf(http.StatusNotFound, "not found")
	}
	ps, err := h.store.PingList(c.Request().Context(), &monitors.HistoryListParams{
		ProjectID: rq.key.ProjectID, MonitorID: m.ID, Limit: 1, Before: n + 1})
	if err != nil {
		return err
	}
	if len(ps) == 0 || ps[0].ID != n || ps[0].Body == "" {
		return hcErrorf(http.StatusNotFound, "not found")
	}
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(ps[0].Body))
}

// hcFlip is a change of a check's status between up and down.
type hcFlip struct {
	Timestamp string `json:"timestamp"`
	Up        int    `json:"up"`
}

// hcFlips makes the flips of a check from its incidents: it goes down
// when its first open incident opens, and up when its last open one
// resolves. Newest first.
func hcFlips(ins []*monitors.Incident) []hcFlip {
	type edge struct {
		at   time.Time
		open bool
	}
	var edges []edge
	for _, in := range ins {
		edges = append(edges, edge{in.OpenedAt, true})
		if in.ResolvedAt != nil {
			edges = append(edges, edge{*in.ResolvedAt, false})
		}
	}
	// At one instant, openings go first: an incident that opens as another
	// resolves keeps the check down, with no flip.
	slices.SortStableFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		switch {
		case a.open && !b.open:
			return -1
		case !a.open && b.open:
			return 1
		}
		return 0
	})
	var flips []hcFlip
	open := 0
	for _, e := range edges {
		if e.open {
			open++
			if open == 1 {
				flips = append(flips, hcFlip{Timestamp: *hcTime(e.at), Up: 0})
			}
			continue
		}
		open--
		if open == 0 {
			flips = append(flips, hcFlip{Timestamp: *hcTime(e.at), Up: 1})
		}
	}
	slices.Reverse(flips)
	if flips == nil {
		flips = []hcFlip{}
	}
	return flips
}

// hcListFlips answers GET /api/vN/checks/{uuid or unique_key}/flips/,
// filtered by ?seconds= (the last so many seconds), ?start= and ?end=
// (UNIX times).
func (h *Handler) hcListFlips(c echo.Context, rq *hcRequest) error {
	m, err := h.hcFind(c, rq, true)
	if err != nil {
		return err
	}
	var from, to *time.Time
	for _, name := range []string{"seconds", "start", "end"} {
		v := c.QueryParam(name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return hcErrorf(http.StatusBadRequest, "invalid %s: must be a whole number, 0 or more", name)
		}
		var t time.Time
		switch name {
		case "seconds":
			t = h.now().Add(-time.Duration(n) * time.Second)
		default:
			t = time.Unix(n, 0)
		}
		if name == "end" {
			to = &t
		} else if from == nil || t.After(*from) {
			from = &t
		}
	}
	ins, err := h.store.IncidentList(c.Request().Context(), &monitors.IncidentListParams{
		ProjectID: rq.key.ProjectID, MonitorID: m.ID, Limit: hcFlipIncidents})
	if err != nil {
		return err
	}
	out := []hcFlip{}
	for _, f := range hcFlips(ins) {
		at, err := time.Parse(time.RFC3339, f.Timestamp)
		if err != nil {
			return fmt.Errorf("parse flip time: %w", err)
		}
		if (from != nil && !at.After(*from)) || (to != nil && !at.Before(*to)) {
			continue
		}
		out = append(out, f)
	}
	return c.JSON(http.StatusOK, out)
}

// hcChannel is an integration as Healthchecks' API lists it.
type hcChannel struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// hcListChannels answers GET /api/vN/channels/.
func (h *Handler) hcListChannels(c echo.Context, rq *hcRequest) error {
	chs, err := h.hcChannels(c, rq)
	if err != nil {
		return err
	}
	out := make([]hcChannel, 0, len(chs))
	for _, ch := range chs {
		out = append(out, hcChannel{ID: ch.ID, Name: ch.Name, Kind: healthchecks.KindName(ch.Kind)})
	}
	return c.JSON(http.StatusOK, map[string][]hcChannel{"channels": out})
}

// hcBadge are a badge's URLs in each of Healthchecks' formats: svg, json
// and shields report up or down (late counts as up), and svg3, json3 and
// shields3 up, late or down.
type hcBadge struct {
	SVG      string `json:"svg"`
	SVG3     string `json:"svg3"`
	JSON     string `json:"json"`
	JSON3    string `json:"json3"`
	Shields  string `json:"shields"`
	Shields3 string `json:"shields3"`
}

// hcListBadges answers GET /api/vN/badges/: the badges of every tag, and
// "*" for the whole project.
func (h *Handler) hcListBadges(c echo.Context, rq *hcRequest) error {
	ms, err := h.hcAll(c, rq)
	if err != nil {
		return err
	}
	secret, err := h.hcBadgeKey(c, rq)
	if err != nil {
		return err
	}
	out := map[string]hcBadge{allTarget: h.hcBadgeURLs(rq.key.ProjectID, secret, allTarget)}
	for _, m := range ms {
		for _, t := range m.Tags {
			if _, ok := out[t]; !ok {
				out[t] = h.hcBadgeURLs(rq.key.ProjectID, secret, tagTarget(t))
			}
		}
	}
	return c.JSON(http.StatusOK, map[string]map[string]hcBadge{"badges": out})
}

func (h *Handler) hcBadgeURLs(projectID, secret, target string) hcBadge {
	base := h.badgeBase(projectID, secret, target)
	return hcBadge{
		SVG: base + badgeTwoState + ".svg", SVG3: base + ".svg",
		JSON: base + badgeTwoState + badgeStatusJSON, JSON3: base + badgeStatusJSON,
		Shields: base + badgeTwoState + ".json", Shields3: base + ".json",
	}
}
