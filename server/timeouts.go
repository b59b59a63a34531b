package server

import (
	"cmp"
	"net/http"
	"strings"
	"time"
)

// RouteTimeout bounds one request: Read is how long its body may take to
// arrive, counted from when its headers have been read; Write how long its
// answer may take to be written, counted from the same moment. A body that
// is still arriving at Read is cut off; the handler reads an error.
type RouteTimeout struct {
	Read, Write time.Duration
}

// HTTPTimeouts bound requests by route. No route of Vigil streams an
// answer (the dashboard refreshes by polling), so each answer has a
// deadline. Zero values take the defaults below.
type HTTPTimeouts struct {
	// Ping is /ping/...: a body of up to 10 MiB, and an answer that waits
	// for the ping to be durable (a batch has 30 s).
	Ping RouteTimeout
	// API is /api/...: a body of up to VIGIL_API_BODY_LIMIT, and an answer
	// that may wait for a test notification (VIGIL_DELIVERY_TIMEOUT).
	API RouteTimeout
	// Web is the dashboard: forms of at most 256 KiB.
	Web RouteTimeout
	// Health is /healthz and /readyz.
	Health RouteTimeout
}

// Defaults of HTTPTimeouts, and of the server's own backstops.
var (
	PingTimeoutDefault   = RouteTimeout{Read: 30 * time.Second, Write: 45 * time.Second}
	APITimeoutDefault    = RouteTimeout{Read: 30 * time.Second, Write: 90 * time.Second}
	WebTimeoutDefault    = RouteTimeout{Read: 20 * time.Second, Write: 60 * time.Second}
	HealthTimeoutDefault = RouteTimeout{Read: 5 * time.Second, Write: 10 * time.Second}
)

const (
	// readHeaderTimeout bounds the arrival of a request's headers.
	readHeaderTimeout = 10 * time.Second
	// idleTimeout is how long a kept-alive connection may wait for its
	// next request.
	idleTimeout = 2 * time.Minute
	// readTimeoutMax and writeTimeoutMax are the server's backstops,
	// for a request that no route timeout reaches.
	readTimeoutMax  = time.Minute
	writeTimeoutMax = 2 * time.Minute
)

func (t HTTPTimeouts) withDefaults() HTTPTimeouts {
	fill := func(r, d RouteTimeout) RouteTimeout {
		return RouteTimeout{Read: cmp.Or(r.Read, d.Read), Write: cmp.Or(r.Write, d.Write)}
	}
	return HTTPTimeouts{Ping: fill(t.Ping, PingTimeoutDefault), API: fill(t.API, APITimeoutDefault),
		Web: fill(t.Web, WebTimeoutDefault), Health: fill(t.Health, HealthTimeoutDefault)}
}

// forPath returns the timeouts of the route of path.
func (t HTTPTimeouts) forPath(path string) RouteTimeout {
	switch {
	case strings.HasPrefix(path, "/ping/"):
		return t.Ping
	case strings.HasPrefix(path, "/api/"):
		return t.API
	case path == "/healthz" || path == "/readyz":
		return t.Health
	}
	return t.Web
}

// withTimeouts sets the read and write deadlines of each request by its
// route, in place of the server's backstops.
func withTimeouts(t HTTPTimeouts, next http.Handler) http.Handler {
	t = t.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := t.forPath(r.URL.Path)
		rc := http.NewResponseController(w)
		now := time.Now()
		// Errors mean the writer cannot have deadlines (a test's
		// recorder); the server's backstops then apply.
		_ = rc.SetReadDeadline(now.Add(rt.Read))
		_ = rc.SetWriteDeadline(now.Add(rt.Write))
		next.ServeHTTP(w, r)
	})
}
