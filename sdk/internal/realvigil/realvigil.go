// Package realvigil starts a real Vigil server inside a test, so the SDK and
// its scheduler integrations are proven against the real ping endpoints,
// the real declaration API, the real state machine and a real database,
// not only against the protocol recorder of package vigiltest.
//
// [Start] runs server.New, Listen and Run on 127.0.0.1 with a fresh SQLite
// file (or the PostgreSQL database of [WithDatabase]), and shuts the server
// down when the test ends. The result is checked through the server's
// store ([Vigil.Store]) or its management API ([Vigil.Monitor],
// [Vigil.Runs], [Vigil.Pings], [Vigil.Incidents]).
//
// # Fake time
//
// Tests that drive a scheduler with testing/synctest give their SDK client
// [Vigil.HTTPClient]: its requests leave the bubble and go over real TCP
// from a goroutine started outside it, so the server handles them with real
// time and real goroutines, while the scheduler's clock stays fake. A
// request in flight holds the bubble's clock (its goroutine is not durably
// blocked), so synctest.Wait returns only once every ping was answered, and
// Vigil answers a ping only once it is stored.
package realvigil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// requestTimeout bounds each request made for a test, so that a server
// that hangs fails the test instead of blocking it.
const requestTimeout = 30 * time.Second

// Databases returns, by name, how to get a fresh empty database for a
// test: "sqlite" (a file in a temporary directory) and "postgres" (a schema
// of the database in VIGIL_TEST_POSTGRES_URL; the test is skipped without
// it, and fails when CI=true).
func Databases() map[string]func(testing.TB) string {
	return map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	}
}

// An Option configures [Start].
type Option func(*options)

type options struct {
	database func(testing.TB) string
}

// WithDatabase makes the server use the database that newDB returns, such
// as one of [Databases]; the default is a fresh SQLite file.
func WithDatabase(newDB func(testing.TB) string) Option {
	return func(o *options) { o.database = newDB }
}

// Vigil is a running server.
type Vigil struct {
	// URL is the server's base URL, such as http://127.0.0.1:41234; it is
	// also the server's configured base URL, so declared ping URLs point
	// at it.
	URL string
	// APIKey is the admin API key of the default project.
	APIKey string
	// ProjectID and ProjectPingKey are those of the default project.
	ProjectID      string
	ProjectPingKey string

	srv     *server.Server
	stop    context.CancelFunc
	done    chan error
	stopped bool
	outside *outside
}

// Start starts a Vigil server for the test and stops it when the test
// ends. The server runs every part the binary runs (ingest, evaluator, API)
// with the binary's default settings, and real time.
func Start(t testing.TB, opts ...Option) *Vigil {
	t.Helper()
	o := options{database: func(tb testing.TB) string { return testdb.SQLitePath(tb) }}
	for _, opt := range opts {
		opt(&o)
	}
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))

	// The base URL must carry the real port, which port 0 only tells after
	// Listen, but the server takes its base URL before: pick a free port,
	// and start over with another should it be taken meanwhile.
	var srv *server.Server
	var addr string
	for try := 0; ; try++ {
		addr = freeAddr(t)
		db := o.database(t)
		cfg := server.Config{
			DatabaseURL: db, SecretKeyFile: testdb.KeyFile(db), Listen: addr, BaseURL: "http://" + addr,
			LogLevel: "info", LogFormat: "text",
			KeepPings: 1000, KeepRuns: 1000, PruneInterval: 10 * time.Minute,
			Ingest: ingest.Config{BatchSize: 500, BatchWindow: 2 * time.Millisecond, RateLimit: 5, RateBurst: 50},
		}
		var err error
		srv, err = server.New(context.Background(), cfg, logger)
		if err != nil {
			t.Fatalf("start Vigil: %v", err)
		}
		if err = srv.Listen(); err == nil {
			break
		}
		_ = srv.Store().Close()
		if try == 2 {
			t.Fatalf("start Vigil: %v", err)
		}
	}
	if srv.Bootstrapped == nil {
		t.Fatal("start Vigil: the database was not empty")
	}
	ctx, cancel := context.WithCancel(context.Background())
	v := &Vigil{
		URL:            "http://" + addr,
		APIKey:         srv.Bootstrapped.APIKey,
		ProjectID:      srv.Bootstrapped.Project.ID,
		ProjectPingKey: srv.Bootstrapped.Project.PingKey,
		srv:            srv, stop: cancel, done: make(chan error, 1),
		outside: newOutside(),
	}
	go func() { v.done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		v.Stop(t)
		v.outside.close()
	})
	return v
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	return addr
}

// Stop shuts the server down now, as an operator or a crash would: from
// then on its port refuses connections. The test's end calls it too.
func (v *Vigil) Stop(t testing.TB) {
	t.Helper()
	if v.stopped {
		return
	}
	v.stopped = true
	v.stop()
	select {
	case err := <-v.done:
		if err != nil {
			t.Errorf("Vigil stopped with an error: %v", err)
		}
	case <-time.After(requestTimeout):
		t.Errorf("Vigil did not stop within %s", requestTimeout)
	}
}

// Store is the server's store, for checks of what it kept. It is closed
// once the server stops.
func (v *Vigil) Store() monitors.Store { return v.srv.Store() }

// HTTPClient returns an HTTP client whose requests are made over real TCP
// by goroutines outside any testing/synctest bubble. Give it to SDK clients
// that run inside a bubble (sdk.WithHTTPClient); outside one, it behaves as
// a plain client.
func (v *Vigil) HTTPClient() *http.Client { return &http.Client{Transport: v.outside} }

// outside makes HTTP requests on behalf of callers that may be inside a
// synctest bubble. Every channel it uses was made outside any bubble,
// which is what lets a bubbled goroutine wait on it, and its goroutines
// are not bubbled, so the server sees real time.
type outside struct {
	calls  chan call
	free   chan chan result
	quit   chan struct{}
	client *http.Client
	tr     *http.Transport
}

type call struct {
	req   *http.Request
	reply chan result
}

type result struct {
	resp *http.Response
	err  error
}

// outsideConcurrency is how many requests may be in flight at once.
const outsideConcurrency = 64

func newOutside() *outside {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	o := &outside{
		calls: make(chan call), free: make(chan chan result, outsideConcurrency), quit: make(chan struct{}),
		tr: tr, client: &http.Client{Transport: tr, Timeout: requestTimeout},
	}
	for range outsideConcurrency {
		o.free <- make(chan result, 1)
	}
	go o.dispatch()
	return o
}

func (o *outside) dispatch() {
	for {
		select {
		case c := <-o.calls:
			go func() { c.reply <- o.do(c.req) }()
		case <-o.quit:
			return
		}
	}
}

func (o *outside) close() {
	close(o.quit)
	o.tr.CloseIdleConnections()
}

// RoundTrip implements http.RoundTripper. The request's context is not
// passed on (a bubble's context cannot be watched from outside it); each
// request is bounded by requestTimeout instead.
func (o *outside) RoundTrip(r *http.Request) (*http.Response, error) {
	reply := <-o.free
	defer func() { o.free <- reply }()
	select {
	case o.calls <- call{req: r, reply: reply}:
	case <-o.quit:
		return nil, fmt.Errorf("realvigil: %s %s: the test is over", r.Method, r.URL.Path)
	}
	res := <-reply
	if res.resp != nil {
		res.resp.Request = r
	}
	return res.resp, res.err
}

// do makes the request and reads its whole answer.
func (o *outside) do(r *http.Request) result {
	out := r.Clone(context.Background())
	out.RequestURI = ""
	resp, err := o.client.Do(out)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return result{err: err}
	}
	return result{resp: &http.Response{
		Status: resp.Status, StatusCode: resp.StatusCode, Proto: resp.Proto,
		ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
	}}
}

// Call makes a request of the management API with the admin key and, when
// out is not nil, decodes the JSON answer into it. body, when not nil, is
// sent as JSON. An answer with a status other than want fails the test.
func (v *Vigil) Call(t testing.TB, method, path string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("%s %s: encode body: %v", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, v.URL+path, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+v.APIKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := v.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", method, path, err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode answer: %v: %s", method, path, err, data)
		}
	}
}

// CreateMonitor creates a monitor through POST /api/v1/monitors with the
// given fields (PROTOCOL.md §2) and returns it.
func (v *Vigil) CreateMonitor(t testing.TB, fields map[string]any) api.Monitor {
	t.Helper()
	var m api.Monitor
	v.Call(t, http.MethodPost, "/api/v1/monitors", fields, http.StatusCreated, &m)
	return m
}

// Monitors lists the project's monitors through the API, by name; source,
// when not empty, keeps only those it declares.
func (v *Vigil) Monitors(t testing.TB, source string) []api.Monitor {
	t.Helper()
	q := url.Values{"limit": {"500"}}
	if source != "" {
		q.Set("source", source)
	}
	var list api.MonitorList
	v.Call(t, http.MethodGet, "/api/v1/monitors?"+q.Encode(), nil, http.StatusOK, &list)
	return list.Monitors
}

// FindMonitor returns the project's monitor with slug, and whether there
// is one.
func (v *Vigil) FindMonitor(t testing.TB, slug string) (api.Monitor, bool) {
	t.Helper()
	ms := v.Monitors(t, "")
	i := slices.IndexFunc(ms, func(m api.Monitor) bool { return m.Slug == slug })
	if i < 0 {
		return api.Monitor{}, false
	}
	return ms[i], true
}

// Monitor returns the project's monitor with slug, or fails the test.
func (v *Vigil) Monitor(t testing.TB, slug string) api.Monitor {
	t.Helper()
	m, ok := v.FindMonitor(t, slug)
	if !ok {
		t.Fatalf("no monitor with slug %q", slug)
	}
	return m
}

// Pings returns a monitor's pings through the API, oldest first.
func (v *Vigil) Pings(t testing.TB, monitorID string) []api.Ping {
	t.Helper()
	var list api.PingList
	v.Call(t, http.MethodGet, "/api/v1/monitors/"+monitorID+"/pings?limit=500", nil, http.StatusOK, &list)
	slices.Reverse(list.Pings)
	return list.Pings
}

// Runs returns a monitor's runs through the API, oldest first.
func (v *Vigil) Runs(t testing.TB, monitorID string) []api.Run {
	t.Helper()
	var list api.RunList
	v.Call(t, http.MethodGet, "/api/v1/monitors/"+monitorID+"/runs?limit=500", nil, http.StatusOK, &list)
	slices.Reverse(list.Runs)
	return list.Runs
}

// Incidents returns a monitor's incidents through the API, oldest first.
func (v *Vigil) Incidents(t testing.TB, monitorID string) []api.Incident {
	t.Helper()
	var list api.IncidentList
	v.Call(t, http.MethodGet, "/api/v1/monitors/"+monitorID+"/incidents?limit=100", nil, http.StatusOK, &list)
	slices.Reverse(list.Incidents)
	return list.Incidents
}

// RunOutcomes renders runs as "outcome attempt" lines, with " retry" for a
// failure the scheduler announced it would retry and "open" for a run
// still going on, for exact comparisons.
func RunOutcomes(runs []api.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		s := "open"
		if r.Outcome != nil {
			s = *r.Outcome
		}
		s += fmt.Sprintf(" %d", r.Attempt)
		if r.WillRetry {
			s += " retry"
		}
		out[i] = s
	}
	return out
}

// IncidentKinds renders incidents as "kind" or "kind resolved".
func IncidentKinds(incidents []api.Incident) []string {
	out := make([]string, len(incidents))
	for i, inc := range incidents {
		out[i] = inc.Kind
		if inc.ResolvedAt != nil {
			out[i] += " resolved"
		}
	}
	return out
}

// Eventually polls cond every 10 ms until it holds, and fails the test
// when it still does not after 20 s. It is for conditions reached in real
// time, such as a job that River runs; the bound only stops a test that
// would hang, nothing waits for it to pass. Inside a synctest bubble use
// synctest.Wait instead.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not true after 20 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Slugs returns the slugs of ms, sorted.
func Slugs(ms []api.Monitor) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Slug
	}
	slices.Sort(out)
	return out
}

// StatusLine renders a monitor's declaration state: "source discovered
// paused status", for exact comparisons.
func StatusLine(m api.Monitor) string {
	var b strings.Builder
	b.WriteString(m.Source)
	if m.Discovered {
		b.WriteString(" discovered")
	} else {
		b.WriteString(" undiscovered")
	}
	if m.Paused {
		b.WriteString(" paused")
	}
	b.WriteString(" " + m.Status)
	return b.String()
}
