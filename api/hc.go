package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// Healthchecks.io's management API
//
// Vigil serves Healthchecks.io's management API, versions 1, 2 and 3, under
// /api/v1/checks/, /api/v2/checks/ and /api/v3/checks/ (with channels/ and
// badges/ beside them), as Healthchecks documents it, so that scripts and
// Terraform configurations written for Healthchecks work against Vigil by
// changing the base URL. A check is a monitor: its uuid is the monitor's
// ping key. What a check's fields set goes through the same rules as the
// rest of the API (manage and monitors.Validate); hc*.go only translate.
//
// These routes are not in the route table: the OpenAPI document describes
// Vigil's own API, and Healthchecks' documentation describes this one.

// hcVersions are the versions of Healthchecks' API served.
var hcVersions = []int{1, 2, 3}

// hcAccess says which keys may call a Healthchecks route: Healthchecks'
// read-only keys work only with the list and get of checks, flips and
// badges.
type hcAccess int

const (
	hcReadOnly hcAccess = iota
	hcReadWrite
)

// hcRoute is one route of Healthchecks' API in one version.
type hcRoute struct {
	method, path string
	access       hcAccess
	fn           func(c echo.Context, rq *hcRequest) error
}

// hcRequest is what a Healthchecks handler knows of the call.
type hcRequest struct {
	v   int // API version: 1, 2 or 3
	key *monitors.APIKey
	// body is the JSON object of a POST, nil when the body was empty.
	body object

	channels []*monitors.Channel // the project's channels, loaded on first use
	badge    string
	project  *monitors.Project
}

// hcRoutes lists the routes of one version. Healthchecks' paths end in a
// slash; the same paths without it are served too, except /api/v1/channels,
// which is Vigil's own.
func (h *Handler) hcRoutes(v int) []hcRoute {
	p := fmt.Sprintf("/api/v%d", v)
	rs := []hcRoute{
		{http.MethodGet, p + "/checks/", hcReadOnly, h.hcListChecks},
		{http.MethodPost, p + "/checks/", hcReadWrite, h.hcCreateCheck},
		{http.MethodGet, p + "/checks/:code", hcReadOnly, h.hcGetCheck},
		{http.MethodPost, p + "/checks/:code", hcReadWrite, h.hcUpdateCheck},
		{http.MethodDelete, p + "/checks/:code", hcReadWrite, h.hcDeleteCheck},
		{http.MethodPost, p + "/checks/:code/pause", hcReadWrite, h.hcPauseCheck},
		{http.MethodPost, p + "/checks/:code/resume", hcReadWrite, h.hcResumeCheck},
		{http.MethodGet, p + "/checks/:code/pings/", hcReadWrite, h.hcListPings},
		{http.MethodGet, p + "/checks/:code/pings/:n/body", hcReadWrite, h.hcPingBody},
		{http.MethodGet, p + "/checks/:code/flips/", hcReadOnly, h.hcListFlips},
		{http.MethodGet, p + "/channels/", hcReadWrite, h.hcListChannels},
		{http.MethodGet, p + "/badges/", hcReadOnly, h.hcListBadges},
	}
	if v == 3 {
		rs = append(rs, hcRoute{http.MethodGet, p + "/status/", hcReadOnly, h.hcStatus})
	}
	var out []hcRoute
	for _, r := range rs {
		out = append(out, r)
		if trimmed := strings.TrimSuffix(r.path, "/"); trimmed != r.path && trimmed != "/api/v1/channels" {
			out = append(out, hcRoute{r.method, trimmed, r.access, r.fn})
		}
	}
	return out
}

// IsHealthchecksRoute reports whether path (echo's form) is a route of
// Healthchecks' API, which the OpenAPI document leaves to Healthchecks'
// documentation.
func IsHealthchecksRoute(path string) bool {
	for _, v := range hcVersions {
		for _, r := range (&Handler{}).hcRoutes(v) {
			if r.path == path {
				return true
			}
		}
	}
	return false
}

// mountHealthchecks adds Healthchecks' API to e.
func (h *Handler) mountHealthchecks(e *echo.Echo) {
	for _, v := range hcVersions {
		for _, r := range h.hcRoutes(v) {
			e.Add(r.method, r.path, h.hcServe(v, r))
		}
	}
}

// hcServe wraps a Healthchecks handler with its authentication and its
// error answers.
func (h *Handler) hcServe(v int, r hcRoute) echo.HandlerFunc {
	metric := route{method: r.method, path: r.path}
	return func(c echo.Context) error {
		start := time.Now()
		rq := &hcRequest{v: v}
		err := h.hcAuthorize(c, r, rq)
		if err == nil {
			err = r.fn(c, rq)
		}
		if err != nil {
			err = h.hcWriteError(c, err)
		}
		h.metrics.observe(metric, c.Response().Status, time.Since(start))
		return err
	}
}

// hcError is an error answered as Healthchecks answers: {"error": msg}.
type hcError struct {
	status int
	msg    string
}

func (e *hcError) Error() string { return e.msg }

func hcErrorf(status int, format string, args ...any) error {
	return &hcError{status: status, msg: fmt.Sprintf(format, args...)}
}

// hcAuthorize reads the body of a POST (where Healthchecks also takes the
// key, as api_key) and checks the key: X-Api-Key, or api_key in the body.
func (h *Handler) hcAuthorize(c echo.Context, r hcRoute, rq *hcRequest) error {
	if c.Request().Method == http.MethodPost {
		b, err := h.readBody(c)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if err := json.Unmarshal(b, &rq.body); err != nil || rq.body == nil {
				return hcErrorf(http.StatusBadRequest, "could not parse request body: it must be one JSON object")
			}
		}
	}
	raw := strings.TrimSpace(c.Request().Header.Get("X-Api-Key"))
	if raw == "" && rq.body.has("api_key") {
		if err := json.Unmarshal(rq.body["api_key"], &raw); err != nil {
			return hcErrorf(http.StatusBadRequest, "json validation error: api_key is not a string")
		}
		raw = strings.TrimSpace(raw)
	}
	if raw == "" {
		return hcErrorf(http.StatusUnauthorized, "missing api key")
	}
	key, err := h.store.APIKeyGetByHash(c.Request().Context(), keys.HashAPIKey(raw))
	if errors.Is(err, monitors.ErrNotFound) {
		return hcErrorf(http.StatusUnauthorized, "wrong api key")
	}
	if err != nil {
		return err
	}
	if r.access == hcReadWrite && key.ReadOnly {
		return hcErrorf(http.StatusUnauthorized, "wrong api key: a read-only key works only with the list and get of checks, flips and badges")
	}
	rq.key = key
	h.touch(key)
	return nil
}

// hcFieldNames are the names of Healthchecks' fields for Vigil's, in
// validation errors.
var hcFieldNames = map[string]string{
	"grace_seconds":          "grace",
	"description":            "desc",
	"schedule.every_seconds": "timeout",
	"schedule.expr":          "schedule",
	"schedule.tz":            "tz",
	"schedule.kind":          "schedule",
	"schedule.dialect":       "schedule",
}

// hcWriteError answers err as Healthchecks does, {"error": "..."}, with
// Vigil's message. Errors that are not the client's are logged and
// answered as "internal error".
func (h *Handler) hcWriteError(c echo.Context, err error) error {
	status, msg := http.StatusInternalServerError, "internal error"
	var (
		he  *hcError
		ae  *apiError
		ve  *monitors.ValidationError
		lim *monitors.LimitError
	)
	switch {
	case errors.As(err, &he):
		status, msg = he.status, he.msg
	case errors.As(err, &ve):
		field := ve.Field
		if n, ok := hcFieldNames[field]; ok {
			field = n
		}
		status, msg = http.StatusBadRequest, "invalid value for "+field+": "+ve.Message
	case errors.As(err, &ae):
		status, msg = ae.status, ae.Error()
	case errors.As(err, &lim):
		// Healthchecks answers 403 when the account hit its check limit.
		status, msg = http.StatusForbidden, lim.Error()
	case errors.Is(err, monitors.ErrNotFound):
		status, msg = http.StatusNotFound, "not found"
	}
	if status >= 500 {
		h.log.ErrorContext(c.Request().Context(), "healthchecks api request failed", "method", c.Request().Method,
			"path", c.Request().URL.Path, "err", err)
	}
	return c.JSON(status, map[string]string{"error": msg})
}

// hcStatus answers GET /api/v3/status/: 200 when the database answers.
func (h *Handler) hcStatus(c echo.Context, _ *hcRequest) error {
	if err := h.store.Ping(c.Request().Context()); err != nil {
		return err
	}
	return c.String(http.StatusOK, "OK")
}

// hcProject returns the project of the request's key.
func (h *Handler) hcProject(c echo.Context, rq *hcRequest) (*monitors.Project, error) {
	if rq.project == nil {
		p, err := h.store.ProjectGet(c.Request().Context(), rq.key.ProjectID)
		if err != nil {
			return nil, err
		}
		rq.project = p
	}
	return rq.project, nil
}

// hcBadgeKey returns the project's badge secret, once per request.
func (h *Handler) hcBadgeKey(c echo.Context, rq *hcRequest) (string, error) {
	if rq.badge == "" {
		k, err := h.store.ProjectBadgeKey(c.Request().Context(), rq.key.ProjectID)
		if err != nil {
			return "", err
		}
		rq.badge = k
	}
	return rq.badge, nil
}

// hcChannels returns the project's channels, once per request.
func (h *Handler) hcChannels(c echo.Context, rq *hcRequest) ([]*monitors.Channel, error) {
	if rq.channels == nil {
		chs, err := h.store.ChannelList(c.Request().Context(), &monitors.ChannelListParams{ProjectID: rq.key.ProjectID})
		if err != nil {
			return nil, err
		}
		rq.channels = chs
		if rq.channels == nil {
			rq.channels = []*monitors.Channel{}
		}
	}
	return rq.channels, nil
}

// hcTime formats t as Healthchecks does: ISO 8601 in UTC with +00:00, to
// the second.
func hcTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format("2006-01-02T15:04:05") + "+00:00"
	return &s
}

// hcTimeMicro is hcTime to the microsecond, as Healthchecks dates pings.
func hcTimeMicro(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
}
