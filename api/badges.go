package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/monitors"
)

// Badges
//
// A badge key is "{project-id}.{target}.{signature}", where target is
// "m-{monitor-id}" for one monitor, "t-{tag}" for the monitors with a tag,
// or "*" for all the project's monitors, and signature is the first 16 hex
// digits of HMAC-SHA256(project badge key, project ID + "\n" + target).
// The project's badge key is a secret the store makes on first use and
// never returns through the API: a badge URL can be shared, and no one can
// make the URL of another monitor's or tag's badge from it. The URLs are
// /badge/{badge-key}.svg and /badge/{badge-key}.json (the shields.io
// endpoint format); the key is path-escaped, since a tag may hold any
// character but a space or a comma.

// Badge statuses, as shown.
const (
	badgeUp      = "up"
	badgeLate    = "late"
	badgeDown    = "down"
	badgeNew     = "new"
	badgePaused  = "paused"
	badgeUnknown = "no monitors"
)

func monitorTarget(id string) string { return "m-" + id }
func tagTarget(tag string) string    { return "t-" + tag }

const allTarget = "*"

// badgeSignature signs target for the project.
func badgeSignature(projectID, secret, target string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(projectID + "\n" + target))
	return hex.EncodeToString(mac.Sum(nil))[:16]
}

// badgeKey returns the project's badge secret, once per request.
func (h *Handler) badgeKey(c echo.Context, rq *request) (string, error) {
	if rq.badge == "" {
		k, err := h.store.ProjectBadgeKey(c.Request().Context(), rq.key.ProjectID)
		if err != nil {
			return "", err
		}
		rq.badge = k
	}
	return rq.badge, nil
}

// Badge variants, at the end of a badge key: badgeTwoState shows up or
// down only (late counts as up), and badgeStatusJSON is the format of
// Healthchecks' json badges, {"label": ..., "status": ...}. Vigil's own
// API lists the three-state .svg and .json; Healthchecks' badges list
// (hc_history.go) lists every variant.
const (
	badgeTwoState   = "-2"
	badgeStatusJSON = ".status.json"
)

// badgeBase returns the URL of the badge of target without its format.
func (h *Handler) badgeBase(projectID, secret, target string) string {
	return h.baseURL + "/badge/" + url.PathEscape(projectID+"."+target+"."+badgeSignature(projectID, secret, target))
}

// badgeURLs returns the URLs of the badge of target.
func (h *Handler) badgeURLs(projectID, secret, target string) BadgeURLs {
	base := h.badgeBase(projectID, secret, target)
	return BadgeURLs{SVG: base + ".svg", JSON: base + ".json"}
}

// badge answers GET /badge/{badge-key}.svg and .json. Every key that is
// not valid is a plain 404, so keys cannot be probed.
func (h *Handler) badge(c echo.Context, _ *request) error {
	ctx := c.Request().Context()
	file := pathParam(c, "file")
	key, format := "", ""
	switch {
	case strings.HasSuffix(file, badgeStatusJSON):
		key, format = strings.TrimSuffix(file, badgeStatusJSON), "status"
	case strings.HasSuffix(file, ".svg"):
		key, format = strings.TrimSuffix(file, ".svg"), "svg"
	case strings.HasSuffix(file, ".json"):
		key, format = strings.TrimSuffix(file, ".json"), "json"
	default:
		return notFoundBadge
	}
	// A signature is hex, so a -2 after it is the variant.
	twoState := strings.HasSuffix(key, badgeTwoState)
	key = strings.TrimSuffix(key, badgeTwoState)
	first, last := strings.Index(key, "."), strings.LastIndex(key, ".")
	if first < 1 || last <= first+1 {
		return notFoundBadge
	}
	projectID, target, sig := key[:first], key[first+1:last], key[last+1:]
	secret, err := h.store.ProjectBadgeKey(ctx, projectID)
	if errors.Is(err, monitors.ErrNotFound) {
		return notFoundBadge
	}
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(sig), []byte(badgeSignature(projectID, secret, target))) {
		return notFoundBadge
	}

	now := h.now()
	var label, status string
	switch {
	case strings.HasPrefix(target, "m-"):
		m, err := h.store.MonitorGet(ctx, projectID, strings.TrimPrefix(target, "m-"))
		if errors.Is(err, monitors.ErrNotFound) {
			return notFoundBadge
		}
		if err != nil {
			return err
		}
		label, status = m.Name, badgeStatus(m.StatusAt(now))
	case strings.HasPrefix(target, "t-"), target == allTarget:
		p := &monitors.MonitorListParams{ProjectID: projectID, Now: now}
		if target != allTarget {
			p.Tag = strings.TrimPrefix(target, "t-")
			label = p.Tag
		} else {
			prj, err := h.store.ProjectGet(ctx, projectID)
			if err != nil {
				return err
			}
			label = prj.Name
		}
		ms, err := h.store.MonitorList(ctx, p)
		if err != nil {
			return err
		}
		statuses := make([]monitors.Status, len(ms))
		for i, m := range ms {
			statuses[i] = m.StatusAt(now)
		}
		status = aggregateStatus(statuses)
	default:
		return notFoundBadge
	}

	if twoState && status == badgeLate {
		status = badgeUp
	}
	c.Response().Header().Set("Cache-Control", "no-cache, max-age=0")
	if format == "status" {
		return c.JSON(http.StatusOK, map[string]string{"label": label, "status": status})
	}
	if format == "json" {
		return c.JSON(http.StatusOK, shieldsEndpoint{SchemaVersion: 1, Label: label, Message: status,
			Color: badgeColors[status].name, IsError: status == badgeDown})
	}
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", []byte(badgeSVG(label, status)))
}

var notFoundBadge = &apiError{status: http.StatusNotFound, msg: "no such badge"}

// badgeStatus maps a monitor's status to a badge's.
func badgeStatus(st monitors.Status) string {
	switch st {
	case monitors.StatusDown:
		return badgeDown
	case monitors.StatusLate, monitors.StatusRetrying:
		return badgeLate
	case monitors.StatusPaused, monitors.StatusUndeclared:
		return badgePaused
	case monitors.StatusNew:
		return badgeNew
	}
	return badgeUp // up, running
}

// aggregateStatus is the status of several monitors: down if one is down,
// else late if one is late, else up if one is up; paused monitors do not
// count.
func aggregateStatus(sts []monitors.Status) string {
	var seen []string
	for _, st := range sts {
		seen = append(seen, badgeStatus(st))
	}
	for _, s := range []string{badgeDown, badgeLate, badgeUp, badgeNew, badgePaused} {
		if slices.Contains(seen, s) {
			return s
		}
	}
	return badgeUnknown
}

// shieldsEndpoint is shields.io's endpoint badge format.
type shieldsEndpoint struct {
	SchemaVersion int    `json:"schemaVersion"`
	Label         string `json:"label"`
	Message       string `json:"message"`
	Color         string `json:"color"`
	IsError       bool   `json:"isError,omitempty"`
}

var badgeColors = map[string]struct{ name, hex string }{
	badgeUp:      {"brightgreen", "#4c1"},
	badgeLate:    {"orange", "#fe7d37"},
	badgeDown:    {"red", "#e05d44"},
	badgeNew:     {"lightgrey", "#9f9f9f"},
	badgePaused:  {"lightgrey", "#9f9f9f"},
	badgeUnknown: {"lightgrey", "#9f9f9f"},
}

// badgeSVG draws a flat badge as shields.io does: a grey label and a
// coloured message, in Verdana 11px.
func badgeSVG(label, message string) string {
	if len([]rune(label)) > 60 {
		label = string([]rune(label)[:59]) + "…"
	}
	lw, mw := textWidth(label)+10, textWidth(message)+10
	w := lw + mw
	color := badgeColors[message].hex
	l, m := html.EscapeString(label), html.EscapeString(message)
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s: %s">`+
		`<title>%s: %s</title>`+
		`<linearGradient id="s" x2="0" y2="100%%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`+
		`<clipPath id="r"><rect width="%d" height="20" rx="3" fill="#fff"/></clipPath>`+
		`<g clip-path="url(#r)"><rect width="%d" height="20" fill="#555"/><rect x="%d" width="%d" height="20" fill="%s"/><rect width="%d" height="20" fill="url(#s)"/></g>`+
		`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">`+
		`<text x="%d" y="15" fill="#010101" fill-opacity=".3">%s</text><text x="%d" y="14">%s</text>`+
		`<text x="%d" y="15" fill="#010101" fill-opacity=".3">%s</text><text x="%d" y="14">%s</text></g></svg>`,
		w, l, m, l, m, w, lw, lw, mw, color, w,
		lw/2, l, lw/2, l, lw+mw/2, m, lw+mw/2, m)
}

// textWidth estimates the width of s in Verdana 11px, in pixels, from the
// widths of its characters' classes.
func textWidth(s string) int {
	w := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune("il.,:;'|!", r):
			w += 3.3
		case strings.ContainsRune("fjrt()[]{} -/", r):
			w += 4.6
		case strings.ContainsRune("mw", r):
			w += 10.7
		case strings.ContainsRune("MW", r):
			w += 11.4
		case r >= 'A' && r <= 'Z':
			w += 7.6
		case r >= '0' && r <= '9':
			w += 7.0
		case r < 128:
			w += 6.7
		default:
			w += 8.0
		}
	}
	return int(w + 0.5)
}
