package api

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// Defaults and limits.
const (
	// BodyLimitDefault caps a request body (Config.BodyLimit).
	BodyLimitDefault = 1 << 20
	// PageSizeDefault is the size of a page when ?limit is not given.
	PageSizeDefault = 50
	// PageSizeMax is the largest ?limit of monitors, channels, pings and
	// runs; pages of incidents, which carry their events, stop at
	// IncidentPageSizeMax.
	PageSizeMax         = 500
	IncidentPageSizeMax = 100
)

// ChannelTester sends a test notification to a channel. The delivery part
// of the server implements it; without one, POST /channels/{id}/test
// answers 501.
type ChannelTester interface {
	// TestChannel sends one test notification in one attempt. It returns
	// ErrTestUnavailable when the server cannot send to the channel's kind
	// at all (say, email without an SMTP server), and any other error when
	// the channel's receiver refused it or could not be reached; the
	// error's text is shown to the client, so it must not hold a secret.
	TestChannel(ctx context.Context, ch *monitors.Channel) error
}

// DeliveryLister lists the delivery attempts shown with incidents (see
// monitors.StoreDeliveries).
type DeliveryLister = monitors.DeliveryLister

// Config configures the API.
type Config struct {
	Store Store
	// BaseURL is the public URL of this Vigil, without a trailing slash,
	// used in ping and badge URLs.
	BaseURL string
	// NowFunc is the clock; nil is time.Now.
	NowFunc func() time.Time
	// Logger receives errors; nil discards them.
	Logger *slog.Logger
	// BodyLimit caps request bodies; 0 is BodyLimitDefault.
	BodyLimit int64
	// ChannelTester sends test notifications; nil answers 501.
	ChannelTester ChannelTester
	// Deliveries lists the delivery attempts shown with incidents; nil
	// shows none.
	Deliveries DeliveryLister
	// Registerer receives the API's metrics and the collectors of monitors
	// by status and incidents by kind; nil registers none.
	Registerer prometheus.Registerer
	// StatusPagesChanged, when set, is told of every change of a status
	// page (its slugs before and after) or of an incident note of the
	// project, so that the public pages this process caches show it at
	// once (web.Handler.StatusPagesChanged).
	StatusPagesChanged func(projectID string, slugs ...string)
}

// Handler serves the management API and badges.
type Handler struct {
	store      Store
	manage     *manage.Service // what a person changes, as the dashboard
	baseURL    string
	now        func() time.Time
	log        *slog.Logger
	bodyLimit  int64
	tester     ChannelTester
	deliveries DeliveryLister
	routes     []route
	metrics    *requestMetrics

	keyUse  *keyUse
	adviser monitors.Adviser
	// statusChanged is Config.StatusPagesChanged, or nothing.
	statusChanged func(projectID string, slugs ...string)
	docOnce       sync.Once
	doc           []byte
	docErr        error
}

// New returns the API handler. It registers its metrics on
// cfg.Registerer; a second handler on the same registerer fails to.
func New(cfg Config) (*Handler, error) {
	h := &Handler{
		store:      cfg.Store,
		keyUse:     newKeyUse(),
		baseURL:    strings.TrimRight(cfg.BaseURL, "/"),
		now:        cfg.NowFunc,
		log:        cfg.Logger,
		bodyLimit:  cmp.Or(cfg.BodyLimit, BodyLimitDefault),
		tester:     cfg.ChannelTester,
		deliveries: cfg.Deliveries,

		statusChanged: cfg.StatusPagesChanged,
	}
	if h.statusChanged == nil {
		h.statusChanged = func(string, ...string) {}
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	h.manage = manage.New(cfg.Store, h.now)
	h.routes = h.table()
	if cfg.Registerer != nil {
		m, err := newRequestMetrics(cfg.Registerer)
		if err != nil {
			return nil, err
		}
		h.metrics = m
		if err := cfg.Registerer.Register(NewCollector(cfg.Store, h.now, h.log)); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Mount adds every route of the API and the badges to e.
func (h *Handler) Mount(e *echo.Echo) {
	for _, r := range h.routes {
		e.Add(r.method, r.path, h.serve(r))
		if r.method == http.MethodGet && r.access == public {
			e.Add(http.MethodHead, r.path, h.serve(r))
		}
	}
	h.mountHealthchecks(e)
}

// Route is one route of the API, for documentation and tests.
type Route struct {
	Method string
	// Path is echo's form, with :params.
	Path string
	// Write routes need a read-write key.
	Write bool
	// Public routes need no key.
	Public bool
	// Summary says what the route does.
	Summary string
}

// Routes returns every route Mount adds (without the HEAD twins of public
// GETs).
func (h *Handler) Routes() []Route {
	out := make([]Route, len(h.routes))
	for i, r := range h.routes {
		out[i] = Route{Method: r.method, Path: r.path, Write: r.access == write, Public: r.access == public, Summary: r.summary}
	}
	return out
}

type access int

const (
	read access = iota
	write
	public
)

// route is a row of the route table.
type route struct {
	method, path string
	access       access
	summary      string
	fn           func(c echo.Context, rq *request) error
	// doc describes the route's bodies and parameters for OpenAPI.
	doc routeDoc
}

// request is what a handler knows of the caller.
type request struct {
	key *monitors.APIKey

	// Loaded on first use.
	project  *monitors.Project
	badge    string
	channels map[string]bool // IDs of the project's channels
}

// serve wraps a route's handler with authentication, error answers and
// metrics.
func (h *Handler) serve(r route) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		rq := &request{}
		err := h.authorize(c, r, rq)
		if err == nil {
			err = r.fn(c, rq)
		}
		if err != nil {
			err = h.writeError(c, err)
		}
		h.metrics.observe(r, c.Response().Status, time.Since(start))
		return err
	}
}

// authorize checks the API key of the request against the route.
func (h *Handler) authorize(c echo.Context, r route, rq *request) error {
	if r.access == public {
		return nil
	}
	raw := ""
	if v := c.Request().Header.Get(echo.HeaderAuthorization); v != "" {
		scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return &apiError{status: http.StatusUnauthorized, msg: "Authorization must be \"Bearer <API key>\""}
		}
		raw = strings.TrimSpace(token)
	} else {
		raw = strings.TrimSpace(c.Request().Header.Get("X-Api-Key"))
	}
	if raw == "" {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="vigil"`)
		return &apiError{status: http.StatusUnauthorized,
			msg: "an API key is required: send Authorization: Bearer <key> or X-Api-Key: <key>"}
	}
	key, err := h.store.APIKeyGetByHash(c.Request().Context(), keys.HashAPIKey(raw))
	if errors.Is(err, monitors.ErrNotFound) {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="vigil", error="invalid_token"`)
		return &apiError{status: http.StatusUnauthorized, msg: "the API key is not valid, or was revoked"}
	}
	if err != nil {
		return err
	}
	if r.access == write && key.ReadOnly {
		return &apiError{status: http.StatusForbidden, msg: "this API key is read-only: " + r.method + " needs a read-write key"}
	}
	rq.key = key
	h.touch(key)
	return nil
}

// project returns the project of the request's key.
func (h *Handler) project(c echo.Context, rq *request) (*monitors.Project, error) {
	if rq.project == nil {
		p, err := h.store.ProjectGet(c.Request().Context(), rq.key.ProjectID)
		if err != nil {
			return nil, err
		}
		rq.project = p
	}
	return rq.project, nil
}

// page reads ?limit and ?offset.
func page(c echo.Context, maxLimit int) (limit, offset int, err error) {
	limit, offset = min(PageSizeDefault, maxLimit), 0
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			return 0, 0, invalidf("limit", "must be a whole number from 1 to %d", maxLimit)
		}
		limit = n
	}
	if v := c.QueryParam("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, invalidf("offset", "must be a whole number, 0 or more")
		}
		offset = n
	}
	return limit, offset, nil
}

// nextLink returns the URL of the request with query parameter name set
// to value, or nil when there is no next page.
func nextLink(c echo.Context, more bool, set map[string]string) *string {
	if !more {
		return nil
	}
	q := c.Request().URL.Query()
	for k, v := range set {
		q.Set(k, v)
	}
	s := c.Request().URL.Path + "?" + q.Encode()
	return &s
}

// pathParam returns a path parameter, unescaped: echo matches on the raw
// path when the request escaped characters, and then leaves parameters
// escaped.
func pathParam(c echo.Context, name string) string {
	v := c.Param(name)
	if c.Request().URL.RawPath != "" {
		if u, err := unescapePath(v); err == nil {
			return u
		}
	}
	return v
}
