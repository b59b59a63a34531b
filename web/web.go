package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// Defaults of [Config].
const (
	// RefreshIntervalDefault is how often lists and monitor pages refresh
	// their live parts.
	RefreshIntervalDefault = 5 * time.Second
	// SessionLifetime is how long a session lasts without being used.
	SessionLifetime = 14 * 24 * time.Hour
	// SessionMaxAge is how long a session lasts however much it is used:
	// then its person signs in again.
	SessionMaxAge = 30 * 24 * time.Hour
	// sessionRenewAfter is how old a session's expiry may get before a
	// request renews it: at most one write a day per session.
	sessionRenewAfter = 24 * time.Hour
)

// ChannelTester sends a test notification through a channel, as POST
// /api/v1/channels/{id}/test does. The dashboard's "Send test" button calls
// it; without one the button is not shown.
type ChannelTester interface {
	// TestChannel makes one attempt to deliver a test notification to ch
	// and returns its error, in words a person can act on.
	TestChannel(ctx context.Context, ch *monitors.Channel) error
}

// Delivery is one line of an incident's delivery history.
type Delivery = monitors.DeliveryEntry

// DeliveryLister lists the delivery attempts of incidents; the monitor
// page shows them under each incident.
type DeliveryLister = monitors.DeliveryLister

// Config configures the dashboard.
type Config struct {
	Store Store
	// BaseURL is the public URL of this Vigil, without a trailing slash.
	// Ping URLs are built from it, and cookies are Secure when it is https.
	BaseURL string
	Logger  *slog.Logger
	// NowFunc is the clock; nil is time.Now.
	NowFunc func() time.Time
	// RefreshInterval is how often live parts of pages refresh; zero is
	// RefreshIntervalDefault.
	RefreshInterval time.Duration
	// ChannelTester sends test notifications; nil hides the button.
	ChannelTester ChannelTester
	// Deliveries lists the delivery attempts of incidents; nil shows the
	// incidents' events instead.
	Deliveries DeliveryLister
	// LoginRate and LoginBurst limit sign-in attempts per client address;
	// zero is one attempt every 6 seconds with a burst of 10.
	LoginRate  rate.Limit
	LoginBurst int
	// SetupToken is the one-time token of /setup?token=, which alone opens
	// the first-account form while no account exists. Empty: the form is
	// closed, and accounts come from "vigil users create". The server makes
	// a new one at every start on a database without accounts.
	SetupToken string
	// Signer checks the signed links of notifications ("snooze 1 h"):
	// the server's key file. Nil refuses every link.
	Signer manage.Signer
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client, for the sign-in limit. Without any, the client is the
	// connection's address, which a request cannot forge.
	TrustedProxies []netip.Prefix
	// StatusPageTTL is how long a built public status page is served
	// before it is built again; zero is StatusPageTTLDefault.
	StatusPageTTL time.Duration
}

// Handler serves the dashboard.
type Handler struct {
	store   Store
	manage  *manage.Service // what a person changes, as through the API
	baseURL string
	secure  bool
	log     *slog.Logger
	now     func() time.Time
	refresh time.Duration
	tester  ChannelTester
	deliv   DeliveryLister
	pages   *pages
	origin  *http.CrossOriginProtection
	limiter echo.MiddlewareFunc
	// setupLimiter limits setup attempts per client address, as limiter
	// does sign-ins, before any token check or hashing.
	setupLimiter echo.MiddlewareFunc
	setup        *setupToken
	// adviser gives each monitor's advice, as the API's.
	adviser monitors.Adviser
	signer  manage.Signer
	// rowCache keeps the monitor list's rendered rows.
	rowCache *rowCache
	// statusCache holds the built public status pages.
	statusCache *statusCache
}

// New returns the dashboard's handler. It fails only when the embedded
// templates do not parse.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("web: no store")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("web: base URL %q is not an http or https URL", cfg.BaseURL)
	}
	pg, err := parsePages()
	if err != nil {
		return nil, err
	}
	rows, err := newRowCache()
	if err != nil {
		return nil, err
	}
	h := &Handler{
		store:    cfg.Store,
		baseURL:  strings.TrimRight(cfg.BaseURL, "/"),
		secure:   u.Scheme == "https",
		log:      cfg.Logger,
		now:      cfg.NowFunc,
		refresh:  cfg.RefreshInterval,
		tester:   cfg.ChannelTester,
		deliv:    cfg.Deliveries,
		pages:    pg,
		origin:   http.NewCrossOriginProtection(),
		rowCache: rows,
		signer:   cfg.Signer,

		statusCache: newStatusCache(cfg.StatusPageTTL),
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	h.manage = manage.New(cfg.Store, h.now)
	if h.refresh <= 0 {
		h.refresh = RefreshIntervalDefault
	}
	clientIP := clientIPExtractor(cfg.TrustedProxies)
	lr, lb := cfg.LoginRate, cfg.LoginBurst
	if lr == 0 {
		lr = rate.Every(6 * time.Second)
	}
	if lb == 0 {
		lb = 10
	}
	attemptLimiter := func(what string) echo.MiddlewareFunc {
		return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
			Store: middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
				Rate: lr, Burst: lb, ExpiresIn: 10 * time.Minute}),
			IdentifierExtractor: func(c echo.Context) (string, error) { return clientIP(c.Request()), nil },
			ErrorHandler: func(c echo.Context, err error) error {
				return echo.NewHTTPError(http.StatusForbidden, "cannot tell who is signing in")
			},
			DenyHandler: func(c echo.Context, _ string, _ error) error {
				c.Response().Header().Set("Retry-After", "60")
				return h.renderError(c, http.StatusTooManyRequests, "Too many "+what+" attempts from your address. Wait a minute and try again.")
			},
		})
	}
	h.limiter = attemptLimiter("sign-in")
	h.setupLimiter = attemptLimiter("setup")
	h.setup = &setupToken{token: cfg.SetupToken}
	return h, nil
}

// clientIPExtractor returns how a client's address is read: the
// connection's address, or, from a trusted proxy, the nearest address in
// X-Forwarded-For that is not a trusted proxy.
func clientIPExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	// Echo trusts loopback, link-local and private addresses by default;
	// only the configured ranges are trusted here.
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// Register adds the dashboard's routes to e.
func (h *Handler) Register(e *echo.Echo) {
	e.GET("/static/*", h.static)

	// Public status pages: no sign-in, no cookie, none of the dashboard's
	// middleware (see statuspage.go).
	for _, path := range []string{"/status/:slug", "/status/:slug/feed.atom"} {
		fn := h.statusPublic
		if strings.HasSuffix(path, ".atom") {
			fn = h.statusFeed
		}
		e.GET(path, fn)
		e.HEAD(path, fn)
	}

	// Middleware is given per route, not per group: echo's Group(prefix,
	// middleware) also routes every unknown path under the prefix (here:
	// all of them, /api/v1/... included) to the middleware.
	page := func(method, path string, fn func(echo.Context) error, mw ...echo.MiddlewareFunc) {
		e.Add(method, path, h.wrap(fn), append([]echo.MiddlewareFunc{h.headers, h.formLimit}, mw...)...)
	}
	page(http.MethodGet, "/", h.home)
	page(http.MethodGet, "/setup", h.setupPage, h.setupLimiter)
	page(http.MethodPost, "/setup", h.setupCreate, h.setupLimiter)
	page(http.MethodGet, "/login", h.loginForm)
	page(http.MethodPost, "/login", h.login, h.limiter)
	page(http.MethodPost, "/logout", h.logout)
	// A notification's snooze link: signed, no sign-in; GET shows, POST does.
	page(http.MethodGet, "/snooze/:id", h.snoozeLink)
	page(http.MethodPost, "/snooze/:id", h.snoozeLink)

	viewer := func(method, path string, fn func(echo.Context) error) {
		page(method, path, fn, h.requireViewer)
	}
	viewer(http.MethodPost, "/project", h.switchProject)
	viewer(http.MethodGet, "/monitors/new", h.monitorNew)
	viewer(http.MethodPost, "/monitors", h.monitorCreate)
	viewer(http.MethodGet, "/monitors/:id", h.monitorPage)
	viewer(http.MethodGet, "/monitors/:id/edit", h.monitorEdit)
	viewer(http.MethodPost, "/monitors/:id", h.monitorUpdate)
	viewer(http.MethodPost, "/monitors/:id/pause", h.monitorPause)
	viewer(http.MethodPost, "/monitors/:id/resume", h.monitorResume)
	viewer(http.MethodPost, "/monitors/:id/delete", h.monitorDelete)
	viewer(http.MethodPost, "/monitors/:id/snooze", h.monitorSnooze)
	viewer(http.MethodPost, "/monitors/:id/unsnooze", h.monitorUnsnooze)
	viewer(http.MethodGet, "/schedule/preview", h.schedulePreview)
	viewer(http.MethodGet, "/channels", h.channelList)
	viewer(http.MethodGet, "/channels/new", h.channelNew)
	viewer(http.MethodPost, "/channels", h.channelCreate)
	viewer(http.MethodGet, "/channels/:id/edit", h.channelEdit)
	viewer(http.MethodPost, "/channels/:id", h.channelUpdate)
	viewer(http.MethodPost, "/channels/:id/delete", h.channelDelete)
	viewer(http.MethodPost, "/channels/:id/test", h.channelTest)
	viewer(http.MethodGet, "/maintenance", h.maintenanceList)
	viewer(http.MethodPost, "/maintenance", h.maintenanceCreate)
	viewer(http.MethodPost, "/maintenance/:id/end", h.maintenanceEnd)
	viewer(http.MethodPost, "/maintenance/:id/delete", h.maintenanceDelete)
	viewer(http.MethodGet, "/status-pages", h.statusPageList)
	viewer(http.MethodPost, "/status-pages", h.statusPageCreate)
	viewer(http.MethodGet, "/status-pages/:id/edit", h.statusPageEdit)
	viewer(http.MethodPost, "/status-pages/:id", h.statusPageUpdate)
	viewer(http.MethodPost, "/status-pages/:id/publish", h.statusPagePublish(true))
	viewer(http.MethodPost, "/status-pages/:id/unpublish", h.statusPagePublish(false))
	viewer(http.MethodPost, "/status-pages/:id/delete", h.statusPageDelete)
	viewer(http.MethodPost, "/monitors/:id/incidents/:incident/notes", h.incidentNoteCreate)
	viewer(http.MethodPost, "/monitors/:id/incidents/:incident/notes/:note/delete", h.incidentNoteDelete)
	viewer(http.MethodGet, "/keys", h.keyList)
	viewer(http.MethodPost, "/keys", h.keyCreate)
	viewer(http.MethodPost, "/keys/:id/revoke", h.keyRevoke)
	viewer(http.MethodGet, "/settings", h.settings)
	viewer(http.MethodPost, "/settings", h.settingsUpdate)
	viewer(http.MethodPost, "/settings/rotate-ping-key", h.settingsRotatePingKey)
	viewer(http.MethodPost, "/monitors/:id/rotate-ping-key", h.monitorRotatePingKey)

	// A person's own account, with or without a project. Changing the
	// password checks the current one with bcrypt: it shares the sign-in
	// limit, so it cannot be used to guess passwords faster.
	user := func(method, path string, fn func(echo.Context) error, mw ...echo.MiddlewareFunc) {
		page(method, path, fn, append([]echo.MiddlewareFunc{h.requireUser}, mw...)...)
	}
	user(http.MethodGet, "/account", h.account)
	user(http.MethodPost, "/account/password", h.accountPassword, h.limiter)
	user(http.MethodPost, "/account/sign-out-everywhere", h.accountSignOutEverywhere)
}

// headers sets the security headers of every page, and refuses
// cross-origin requests that change state.
func (h *Handler) headers(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		hd := c.Response().Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "+
			"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		hd.Add("Vary", "HX-Request")
		if err := h.origin.Check(c.Request()); err != nil {
			return h.renderError(c, http.StatusForbidden, "This request came from another site, so it was refused.")
		}
		return next(c)
	}
}

// wrap renders the errors of fn as pages: a dashboard user gets a page
// that says what went wrong, not a line of plain text.
func (h *Handler) wrap(fn echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := fn(c)
		if err == nil || c.Response().Committed {
			return err
		}
		var he *echo.HTTPError
		switch {
		case errors.As(err, &he):
			msg, _ := he.Message.(string)
			if msg == "" {
				msg = http.StatusText(he.Code)
			}
			return h.renderError(c, he.Code, msg)
		case errors.Is(err, monitors.ErrNotFound):
			return h.renderError(c, http.StatusNotFound, "Not found: it does not exist, or it belongs to a project you are not a member of.")
		case errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil:
			return nil // the browser went away; there is no one to answer
		}
		h.log.Error("dashboard request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
		return h.renderError(c, http.StatusInternalServerError, "Something went wrong on our side. The error has been logged; try again in a moment.")
	}
}

// isHTMX reports whether the request comes from htmx, which wants a
// fragment rather than a whole page.
func isHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// redirect sends the browser to path after a form post (303 See Other),
// telling htmx to do the same.
func redirect(c echo.Context, path string) error {
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", path)
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, path)
}
