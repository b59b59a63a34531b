package notifiers

import (
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Options are what every kind's New accepts besides its Config. Build them
// with [NewOptions]; kinds read the fields.
type Options struct {
	// HTTPClient makes the requests. The default is
	// NewHTTPClient(HTTPClientOptions{}), which refuses private addresses.
	HTTPClient *http.Client
	// APIURL replaces the scheme and host of the vendor's API (Slack's Web
	// API, PagerDuty's Events API, Opsgenie, Telegram); the kind still adds
	// the path the vendor documents. Empty means the vendor's own. Kinds
	// whose URL is in their Config ignore it.
	APIURL string
	// Logger receives debug records of successful sends. The default
	// discards them.
	Logger *slog.Logger
	// Timeout bounds one attempt. Zero means AttemptTimeoutDefault.
	Timeout time.Duration
}

// Option sets one of the [Options].
type Option func(*Options)

// WithHTTPClient makes the notifier use c. A nil c keeps the default.
func WithHTTPClient(c *http.Client) Option {
	return func(o *Options) {
		if c != nil {
			o.HTTPClient = c
		}
	}
}

// WithAPIURL points the notifier at another server in place of the vendor's
// API, for tests: "http://127.0.0.1:41234". A trailing slash is dropped.
func WithAPIURL(u string) Option {
	return func(o *Options) { o.APIURL = strings.TrimRight(u, "/") }
}

// WithLogger makes the notifier log to l. A nil l keeps the default.
func WithLogger(l *slog.Logger) Option {
	return func(o *Options) {
		if l != nil {
			o.Logger = l
		}
	}
}

// WithTimeout bounds each attempt by d instead of AttemptTimeoutDefault.
func WithTimeout(d time.Duration) Option {
	return func(o *Options) { o.Timeout = d }
}

// NewOptions applies opts over the defaults.
func NewOptions(opts ...Option) Options {
	var o Options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = NewHTTPClient(HTTPClientOptions{})
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = AttemptTimeoutDefault
	}
	return o
}

// APIBase returns o.APIURL, or def (the vendor's own base URL) when it is
// empty.
func (o Options) APIBase(def string) string {
	if o.APIURL != "" {
		return o.APIURL
	}
	return def
}

// LogSent records a successful send at debug level.
func (o Options) LogSent(kind string, n *Notification) {
	o.Logger.Debug("notification sent",
		"notifier", kind, "event", string(n.Event), "incident_id", n.Incident.ID, "monitor_id", n.Monitor.ID)
}
