// Package healthcheckstest is a stand-in for Healthchecks.io's management
// API v3 in tests: an HTTP server on loopback that answers GET
// /api/v3/checks/ and /api/v3/channels/ with the field names, shapes,
// status codes and error bodies Healthchecks documents, read-only keys
// included.
package healthcheckstest

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Server is a Healthchecks project behind its API.
type Server struct {
	*httptest.Server
	// RWKey and ROKey are the project's read-write and read-only keys.
	RWKey, ROKey string

	mu           sync.Mutex
	checks       []map[string]any
	integrations []map[string]any
	fail         map[string]int // path → status to answer instead
	requests     []string
}

// New starts a server, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{RWKey: "rw-key-0123456789abcdef0123456789ab", ROKey: "ro-key-0123456789abcdef0123456789ab",
		fail: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Check returns a check as the API shows it to a read-write key: every
// documented field with its default, then fields (a schedule in fields
// replaces the timeout).
func (s *Server) Check(uuid string, fields map[string]any) map[string]any {
	u := s.URL + "/api/v3/checks/" + uuid
	c := map[string]any{
		"name": "", "slug": "", "tags": "", "desc": "", "grace": 3600, "n_pings": 0, "status": "new",
		"started": false, "last_ping": nil, "next_ping": nil, "manual_resume": false, "methods": "",
		"subject": "", "subject_fail": "", "start_kw": "", "success_kw": "", "failure_kw": "",
		"filter_subject": false, "filter_body": false, "filter_http_body": false, "filter_default_fail": false,
		"badge_url": s.URL + "/b/2/" + uuid + ".svg", "uuid": uuid, "ping_url": "https://hc-ping.com/" + uuid,
		"update_url": u, "pause_url": u + "/pause", "resume_url": u + "/resume", "channels": "", "timeout": 86400,
	}
	maps.Copy(c, fields)
	if _, ok := fields["schedule"]; ok {
		delete(c, "timeout")
		if _, ok := c["tz"]; !ok {
			c["tz"] = "UTC"
		}
	}
	return c
}

// SetChecks sets the project's checks (as Check makes them).
func (s *Server) SetChecks(checks ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks = checks
}

// SetIntegrations sets the project's integrations: id, name, kind.
func (s *Server) SetIntegrations(ins ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.integrations = ins
}

// Fail makes GETs of path answer status (0: answer normally).
func (s *Server) Fail(path string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[path] = status
}

// Requests returns the paths requested so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// readOnlyHidden are the fields Healthchecks leaves out for a read-only
// key, which gets unique_key in their place.
var readOnlyHidden = []string{"uuid", "ping_url", "update_url", "pause_url", "resume_url", "channels"}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.URL.Path)
	answer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	if r.Method != http.MethodGet {
		answer(http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
		return
	}
	if st := s.fail[r.URL.Path]; st >= 500 {
		// Django's own page, not JSON.
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(st)
		_, _ = w.Write([]byte("<h1>Server Error (500)</h1>"))
		return
	} else if st != 0 {
		answer(st, map[string]string{"error": http.StatusText(st)})
		return
	}
	key := r.Header.Get("X-Api-Key")
	switch {
	case key == "":
		answer(http.StatusUnauthorized, map[string]string{"error": "missing api key"})
		return
	case key != s.RWKey && key != s.ROKey:
		answer(http.StatusUnauthorized, map[string]string{"error": "wrong api key"})
		return
	}
	readOnly := key == s.ROKey
	switch r.URL.Path {
	case "/api/v3/checks/":
		out := make([]map[string]any, 0, len(s.checks))
		for i, c := range s.checks {
			c = maps.Clone(c)
			if readOnly {
				for _, f := range readOnlyHidden {
					delete(c, f)
				}
				c["unique_key"] = []string{"a6c7b0a8a66bed0df66abfdab3c77736861703ee", "124f983e0e3dcaeba921cfcef46efd084576e783"}[i%2]
			}
			out = append(out, c)
		}
		answer(http.StatusOK, map[string]any{"checks": out})
	case "/api/v3/channels/":
		if readOnly {
			// Read-only keys work only with checks, flips and badges.
			answer(http.StatusUnauthorized, map[string]string{"error": "wrong api key"})
			return
		}
		out := s.integrations
		if out == nil {
			out = []map[string]any{}
		}
		answer(http.StatusOK, map[string]any{"channels": out})
	default:
		answer(http.StatusNotFound, map[string]string{"error": "not found"})
	}
}
