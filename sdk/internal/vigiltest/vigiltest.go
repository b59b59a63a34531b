// Package vigiltest is a recorder of Vigil's public protocol (PROTOCOL.md
// §1 pings and §4 declarations) for the SDK's tests: an httptest server
// that answers as Vigil does and keeps every request, so tests can assert
// the exact paths, query parameters, bodies and their order.
//
// Tests reach it only through [New] and the methods of [Server], so that
// the same tests can later run against a real Vigil.
package vigiltest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// APIKey is the API key the recorder accepts for declarations.
const APIKey = "vigil-test-api-key"

// Ping is one recorded ping request.
type Ping struct {
	Method string
	// Path is the escaped request path, such as /ping/{key}/start.
	Path string
	// Key is the ping key, or empty for a ping by slug.
	Key string
	// ProjectKey and Slug are set for a ping by slug.
	ProjectKey, Slug string
	// Kind is start, success, fail, log, skip or cancel; an exit-status ping
	// is success (0) or fail with ExitCode set.
	Kind     string
	ExitCode *int
	Query    url.Values
	Body     string
	// Status is the status the recorder answered with.
	Status int
}

// RID, Attempt, RetryIn, RetryAt and DurationMS return the query parameter
// of that name ("" when absent).
func (p Ping) RID() string        { return p.Query.Get("rid") }
func (p Ping) Attempt() string    { return p.Query.Get("attempt") }
func (p Ping) RetryIn() string    { return p.Query.Get("retry_in") }
func (p Ping) RetryAt() string    { return p.Query.Get("retry_at") }
func (p Ping) DurationMS() string { return p.Query.Get("duration_ms") }

// Declaration is one recorded PUT /api/v1/sources/{source}/monitors.
type Declaration struct {
	Source string
	// Raw is the request body as sent.
	Raw []byte
	// Monitors is the body's "monitors", decoded generically so that tests
	// see exactly the JSON field names.
	Monitors []map[string]any
}

// Server is the recorder.
type Server struct {
	srv *httptest.Server
	h   http.Handler

	mu         sync.Mutex
	keys       map[string]bool
	projectKey string
	slugs      map[string]bool
	declared   map[string]map[string]string // source → slug → ping key
	pings      []Ping
	decls      []Declaration
	failNext   []int
	hook       func(r *http.Request)
}

// New starts a recorder, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := NewServer()
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a recorder for Example functions, which have no
// testing.TB; call Close when done.
func NewServer() *Server {
	s := &Server{
		keys: map[string]bool{}, slugs: map[string]bool{},
		projectKey: "pk-" + newKey()[:12], declared: map[string]map[string]string{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ping/", s.ping)
	mux.HandleFunc("PUT /api/v1/sources/{source}/monitors", s.declare)
	s.h = mux
	s.srv = httptest.NewServer(mux)
	return s
}

// Close shuts the recorder down.
func (s *Server) Close() { s.srv.Close() }

// Print writes the pings recorded so far, one a line, as "METHOD path?query
// [body]", with ping keys written as {key} and {project-key}, and run ids,
// durations and retry times as {rid}, {ms} and {time}, so the output is
// stable.
func (s *Server) Print(w io.Writer) {
	for _, p := range s.Pings() {
		path := p.Path
		if p.Key != "" {
			path = strings.Replace(path, p.Key, "{key}", 1)
		}
		if p.ProjectKey != "" {
			path = strings.Replace(path, p.ProjectKey, "{project-key}", 1)
		}
		q := cloneValues(p.Query)
		for name, placeholder := range map[string]string{"rid": "{rid}", "duration_ms": "{ms}", "retry_at": "{time}"} {
			if q.Get(name) != "" {
				q.Set(name, placeholder)
			}
		}
		line := p.Method + " " + path
		if enc := q.Encode(); enc != "" {
			line += "?" + strings.NewReplacer("%7B", "{", "%7D", "}").Replace(enc)
		}
		if p.Body != "" {
			line += " " + strconv.Quote(firstLine(p.Body))
		}
		fmt.Fprintln(w, line)
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// URL is the base URL to give the SDK.
func (s *Server) URL() string { return s.srv.URL }

// Transport serves requests in memory, without a socket, for tests that
// run inside a testing/synctest bubble. Requests still go through the
// recorder's handler; the URL's host is ignored.
func (s *Server) Transport() http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Body == nil {
			r.Body = http.NoBody
		}
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, r)
		return rec.Result(), nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// AddMonitor registers a monitor and returns its ping key.
func (s *Server) AddMonitor() string {
	k := newKey()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[k] = true
	return k
}

// ProjectKey is the project ping key for pings by slug.
func (s *Server) ProjectKey() string { return s.projectKey }

// AddSlug registers a monitor reachable by slug.
func (s *Server) AddSlug(slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slugs[slug] = true
}

// FailNext makes the next len(statuses) requests answer with these
// statuses (a 429 carries Retry-After: 1) before being recorded as usual.
func (s *Server) FailNext(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = append(s.failNext, statuses...)
}

// OnRequest calls hook at the start of every request, before it is
// answered; tests use it to block or observe.
func (s *Server) OnRequest(hook func(r *http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = hook
}

// Pings returns the pings recorded so far, in arrival order.
func (s *Server) Pings() []Ping {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ping(nil), s.pings...)
}

// Declarations returns the declarations recorded so far.
func (s *Server) Declarations() []Declaration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Declaration(nil), s.decls...)
}

// ClosedURL returns the base URL of a port that refuses connections: a
// Vigil that is down.
func ClosedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("close listener: %v", err)
	}
	return "http://" + addr
}

// start runs the hook and any forced failure; it returns the forced status.
func (s *Server) start(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		hook(r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failNext) == 0 {
		return false
	}
	status := s.failNext[0]
	s.failNext = s.failNext[1:]
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	http.Error(w, http.StatusText(status), status)
	return true
}

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	suffix = map[string]string{"": "success", "success": "success", "complete": "success",
		"start": "start", "fail": "fail", "log": "log", "skip": "skip", "cancel": "cancel"}
)

func (s *Server) ping(w http.ResponseWriter, r *http.Request) {
	if s.start(w, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	p := Ping{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.Query(), Body: string(body)}
	status, msg := s.parsePing(&p, strings.Split(strings.TrimPrefix(r.URL.Path, "/ping/"), "/"))
	if status == http.StatusOK {
		status, msg = validate(p.Query)
	}
	p.Status = status
	s.mu.Lock()
	s.pings = append(s.pings, p)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg)
}

// parsePing fills p's key, slug and kind from the path segments after
// /ping/, and says how Vigil would answer.
func (s *Server) parsePing(p *Ping, segs []string) (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var kindSeg string
	switch {
	case len(segs) >= 1 && uuidRE.MatchString(segs[0]) && len(segs) <= 2:
		p.Key = segs[0]
		if len(segs) == 2 {
			kindSeg = segs[1]
		}
		if !s.keys[p.Key] && !s.declaredKey(p.Key) {
			return http.StatusNotFound, "not found"
		}
	case len(segs) == 2 || len(segs) == 3:
		p.ProjectKey, p.Slug = segs[0], segs[1]
		if len(segs) == 3 {
			kindSeg = segs[2]
		}
	default:
		return http.StatusNotFound, "not found"
	}
	if k, ok := suffix[kindSeg]; ok {
		p.Kind = k
	} else if code, err := strconv.Atoi(kindSeg); err == nil && code >= 0 && code <= 255 && strconv.Itoa(code) == kindSeg {
		p.ExitCode = &code
		p.Kind = "fail"
		if code == 0 {
			p.Kind = "success"
		}
	} else {
		return http.StatusNotFound, "not found"
	}
	if p.Slug != "" {
		if p.ProjectKey != s.projectKey {
			return http.StatusNotFound, "not found"
		}
		if !s.slugs[p.Slug] {
			if p.Query.Get("create") != "1" {
				return http.StatusNotFound, "not found"
			}
			s.slugs[p.Slug] = true
			return http.StatusCreated, "Created"
		}
	}
	return http.StatusOK, "OK"
}

func (s *Server) declaredKey(key string) bool {
	for _, slugs := range s.declared {
		for _, k := range slugs {
			if k == key {
				return true
			}
		}
	}
	return false
}

// validate checks the optional query parameters as PROTOCOL.md §1 fixes
// them; it keeps the status of a good request.
func validate(q url.Values) (int, string) {
	if rid := q.Get("rid"); len(rid) > 64 || strings.IndexFunc(rid, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
		return http.StatusBadRequest, "rid must be up to 64 printable characters"
	}
	for _, name := range []string{"attempt", "retry_in", "duration_ms"} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || name == "attempt" && n < 1 {
				return http.StatusBadRequest, name + " must be a whole number"
			}
		}
	}
	if v := q.Get("retry_at"); v != "" {
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return http.StatusBadRequest, "retry_at must be an RFC 3339 time"
		}
	}
	if q.Get("retry_in") != "" && q.Get("retry_at") != "" {
		return http.StatusBadRequest, "retry_in and retry_at exclude each other"
	}
	return http.StatusOK, "OK"
}

func (s *Server) declare(w http.ResponseWriter, r *http.Request) {
	if s.start(w, r) {
		return
	}
	writeErr := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	auth := r.Header.Get("Authorization")
	if auth != "Bearer "+APIKey && r.Header.Get("X-Api-Key") != APIKey {
		writeErr(http.StatusUnauthorized, "missing or unknown API key")
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var in struct {
		Monitors []map[string]any `json:"monitors"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || in.Monitors == nil {
		writeErr(http.StatusBadRequest, "monitors: want a JSON list")
		return
	}
	source := r.PathValue("source")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decls = append(s.decls, Declaration{Source: source, Raw: raw, Monitors: in.Monitors})
	keys := s.declared[source]
	if keys == nil {
		keys = map[string]string{}
		s.declared[source] = keys
	}
	base := "http://" + r.Host
	out := make([]map[string]any, 0, len(in.Monitors))
	for i, m := range in.Monitors {
		slug, _ := m["slug"].(string)
		if slug == "" {
			writeErr(http.StatusBadRequest, fmt.Sprintf("monitors[%d].slug: required", i))
			return
		}
		if keys[slug] == "" {
			keys[slug] = newKey()
		}
		d := map[string]any{}
		for k, v := range m {
			d[k] = v
		}
		d["id"] = "mon-" + keys[slug][:8]
		d["ping_key"] = keys[slug]
		d["ping_url"] = base + "/ping/" + keys[slug]
		d["source"] = source
		d["discovered"] = true
		d["status"] = "new"
		out = append(out, d)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"monitors": out})
}

// newKey returns a random version-4 UUID.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Sleeps records the waits of an SDK client's sleep function and returns
// at once, so tests never sleep.
type Sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep is the function to pass to sdk.WithSleepFunc.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Waits returns the recorded waits.
func (s *Sleeps) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// Log is a slog destination for tests: records go to t.Log and are kept
// for assertions.
type Log struct {
	t  testing.TB
	mu sync.Mutex
	sb strings.Builder
}

// NewLog returns an empty Log for t.
func NewLog(t testing.TB) *Log { return &Log{t: t} }

// Write implements io.Writer for slog's text handler.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sb.Write(p)
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// String returns everything logged so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sb.String()
}

// DeclaredKey returns the ping key the recorder gave slug of source, ""
// when it was never declared.
func (s *Server) DeclaredKey(source, slug string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.declared[source][slug]
}
