package ingest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// testBundle is a running ingest service on a real store, behind a real
// HTTP server.
type testBundle struct {
	store monitors.Store
	url   string
	prj   *monitors.Project
	reg   *prometheus.Registry
	clock *clock
	stop  func() // stops the service (as at shutdown)
}

type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// setup starts ingest on store with cfg (Store, Registerer and NowFunc are
// filled in) and creates a project.
func setup(t *testing.T, store monitors.Store, cfg ingest.Config) *testBundle {
	t.Helper()
	b := &testBundle{store: store, reg: prometheus.NewRegistry(), clock: &clock{}}
	b.clock.set(t0)
	cfg.Store, cfg.Registerer, cfg.NowFunc = store, b.reg, b.clock.now
	if cfg.Logger == nil {
		cfg.Logger = testdb.Logger(t)
	}
	svc := ingest.New(cfg)
	e := echo.New()
	svc.Mount(e)
	srv := httptest.NewServer(e)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.Run(ctx)
	}()
	var once sync.Once
	b.stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(func() {
		srv.Close()
		b.stop()
	})
	b.url = srv.URL
	b.prj = storetest.MustProject(t, store)
	return b
}

// monitor creates a monitor with a UUID ping key.
func (b *testBundle) monitor(t *testing.T, slug string, fn func(m *monitors.Monitor)) *monitors.Monitor {
	t.Helper()
	return storetest.MustMonitor(t, b.store, b.prj.ID, slug, func(m *monitors.Monitor) {
		m.PingKey = keys.NewPingKey()
		if fn != nil {
			fn(m)
		}
	})
}

type response struct {
	status int
	body   string
	header http.Header
}

func (b *testBundle) do(t *testing.T, method, path string, body io.Reader, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, b.url+path, body)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{res.StatusCode, string(data), res.Header}
}

func (b *testBundle) get(t *testing.T, path string) response {
	t.Helper()
	return b.do(t, http.MethodGet, path, nil)
}

func (b *testBundle) pings(t *testing.T, m *monitors.Monitor) []*monitors.Ping {
	t.Helper()
	ps, err := b.store.PingList(context.Background(), &monitors.HistoryListParams{ProjectID: m.ProjectID, MonitorID: m.ID})
	require.NoError(t, err)
	return ps
}

func (b *testBundle) lastPing(t *testing.T, m *monitors.Monitor) *monitors.Ping {
	t.Helper()
	ps := b.pings(t, m)
	require.NotEmpty(t, ps)
	return ps[0]
}

func (b *testBundle) reload(t *testing.T, m *monitors.Monitor) *monitors.Monitor {
	t.Helper()
	got, err := b.store.MonitorGet(context.Background(), m.ProjectID, m.ID)
	require.NoError(t, err)
	return got
}

// forEachStore runs fn against SQLite and PostgreSQL.
func forEachStore(t *testing.T, fn func(t *testing.T, open func(t *testing.T) monitors.Store)) {
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, open)
		})
	}
}

func TestURLForms(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{})
		m := b.monitor(t, "nightly", func(m *monitors.Monitor) { m.Overlap = monitors.OverlapIgnore })
		bySlug := "/ping/" + b.prj.PingKey + "/nightly"
		byKey := "/ping/" + m.PingKey
		code := func(n int) *int { return &n }
		tests := []struct {
			suffix string
			kind   monitors.PingKind
			exit   *int
		}{
			{"", monitors.PingSuccess, nil},
			{"/success", monitors.PingSuccess, nil},
			{"/complete", monitors.PingSuccess, nil},
			{"/start", monitors.PingStart, nil},
			{"/fail", monitors.PingFail, nil},
			{"/log", monitors.PingLog, nil},
			{"/skip", monitors.PingSkip, nil},
			{"/cancel", monitors.PingCancel, nil},
			{"/0", monitors.PingSuccess, code(0)},
			{"/1", monitors.PingFail, code(1)},
			{"/255", monitors.PingFail, code(255)},
		}
		for _, base := range []string{byKey, bySlug} {
			for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
				for _, tt := range tests {
					what := method + " " + strings.ReplaceAll(base, m.PingKey, "{key}") + tt.suffix
					b.clock.advance(time.Second)
					res := b.do(t, method, base+tt.suffix, nil)
					require.Equal(t, http.StatusOK, res.status, what)
					if method == http.MethodHead {
						require.Empty(t, res.body, what)
					} else {
						require.Equal(t, "OK", res.body, what)
					}
					require.Equal(t, "100000", res.header.Get("Ping-Body-Limit"), what)
					require.Equal(t, "*", res.header.Get("Access-Control-Allow-Origin"), what)
					require.Contains(t, res.header.Get("Content-Type"), "text/plain", what)
					p := b.lastPing(t, m)
					require.Equal(t, tt.kind, p.Kind, what)
					require.Equal(t, tt.exit, p.ExitCode, what)
					require.True(t, p.At.Equal(b.clock.now()), what)
				}
			}
		}
		require.Len(t, b.pings(t, m), 2*3*len(tests))
		require.Equal(t, float64(4*2*3), metric(t, b.reg, "success", "ok"), "bare, success, complete and 0; by key and slug; three methods")
	})
}

// metric returns the count of pings of kind with result.
func metric(t *testing.T, reg *prometheus.Registry, kind, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "vigil_ingest_pings_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == kind && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestQueryParametersAndBody(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{})
		m := b.monitor(t, "etl", nil)

		res := b.do(t, http.MethodPost, "/ping/"+m.PingKey+"/start?rid=run-1&attempt=2", strings.NewReader("starting\n"),
			"User-Agent", "curl/8.5.0", "Content-Type", "text/plain")
		require.Equal(t, http.StatusOK, res.status)
		p := b.lastPing(t, m)
		require.Equal(t, monitors.PingStart, p.Kind)
		require.Equal(t, "run-1", p.RID)
		require.Equal(t, 2, p.Attempt)
		require.Equal(t, "starting\n", p.Body)
		require.False(t, p.BodyTruncated)
		require.Equal(t, "curl/8.5.0", p.UserAgent)
		require.Equal(t, "127.0.0.1", p.RemoteAddr)
		require.Equal(t, monitors.StatusRunning, b.reload(t, m).State.Status)

		b.clock.advance(time.Minute)
		res = b.do(t, http.MethodPost, "/ping/"+m.PingKey+"/fail?rid=run-1&attempt=2&retry_in=90&duration_ms=59000",
			strings.NewReader(`{"error":"supplier API: 503"}`), "Content-Type", "application/json")
		require.Equal(t, http.StatusOK, res.status)
		p = b.lastPing(t, m)
		require.Equal(t, monitors.PingFail, p.Kind)
		require.NotNil(t, p.RetryAt)
		require.True(t, p.RetryAt.Equal(b.clock.now().Add(90*time.Second)), "retry_in is counted from the ping")
		require.Equal(t, int64(59000), *p.DurationMS)
		require.Equal(t, `{"error":"supplier API: 503"}`, p.Body)
		require.Equal(t, monitors.StatusRetrying, b.reload(t, m).State.Status)

		b.clock.advance(time.Minute)
		retryAt := b.clock.now().Add(time.Hour).Format(time.RFC3339)
		res = b.get(t, "/ping/"+m.PingKey+"/fail?attempt=3&retry_at="+retryAt)
		require.Equal(t, http.StatusOK, res.status)
		require.Equal(t, retryAt, b.lastPing(t, m).RetryAt.Format(time.RFC3339))

		runs, err := b.store.RunList(context.Background(), &monitors.HistoryListParams{ProjectID: m.ProjectID, MonitorID: m.ID})
		require.NoError(t, err)
		require.NotEmpty(t, runs)
	})
}

func TestCreateBySlug(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{})
		path := "/ping/" + b.prj.PingKey + "/new-job"

		res := b.get(t, path)
		require.Equal(t, http.StatusNotFound, res.status, "no create=1: not found")
		require.Equal(t, "not found", res.body)

		res = b.get(t, path+"/start?create=1")
		require.Equal(t, http.StatusCreated, res.status)
		require.Equal(t, "Created", res.body)

		m, err := b.store.MonitorGetBySlug(context.Background(), b.prj.ID, "new-job")
		require.NoError(t, err)
		require.Equal(t, "new-job", m.Name)
		require.Empty(t, m.Channels, "the project's default channels")
		require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: monitors.IntervalDefault}, m.Schedule)
		require.Equal(t, int64(monitors.GraceSecondsDefault), m.GraceSeconds)
		require.Equal(t, monitors.AlertFinal, m.AlertOnFailure)
		require.Equal(t, monitors.OverlapAlert, m.Overlap)
		require.True(t, keys.IsPingKey(m.PingKey))
		require.Equal(t, monitors.StatusRunning, m.State.Status, "the creating ping was applied")

		b.clock.advance(time.Second)
		res = b.get(t, path+"?create=1")
		require.Equal(t, http.StatusOK, res.status, "it exists now")
		require.Equal(t, "OK", res.body)
		require.Len(t, b.pings(t, m), 2)

		res = b.get(t, "/ping/"+m.PingKey+"/log?create=1")
		require.Equal(t, http.StatusOK, res.status, "its own ping key works too")

		res = b.do(t, http.MethodHead, "/ping/"+b.prj.PingKey+"/other-job?create=1", nil)
		require.Equal(t, http.StatusCreated, res.status)

		res = b.get(t, "/ping/"+storetest.RandomID("pk_")+"/new-job?create=1")
		require.Equal(t, http.StatusNotFound, res.status, "an unknown project creates nothing")
	})
}

func TestConcurrentCreatesMakeOneMonitor(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{BatchWindow: 5 * time.Millisecond})
		var created atomic.Int32
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				res, err := http.Get(b.url + "/ping/" + b.prj.PingKey + "/burst?create=1")
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusCreated:
					created.Add(1)
				case http.StatusOK:
				default:
					t.Errorf("status %d", res.StatusCode)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int32(1), created.Load(), "exactly one request created the monitor")
		ms, err := b.store.MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: b.prj.ID, Now: t0})
		require.NoError(t, err)
		require.Len(t, ms, 1)
		require.Len(t, b.pings(t, ms[0]), 20)
	})
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{})
		m := b.monitor(t, "job", nil)
		key := "/ping/" + m.PingKey
		tests := []struct {
			name, path string
			status     int
			body       string
		}{
			{"unknown key", "/ping/" + keys.NewPingKey(), 404, "not found"},
			{"unknown key, start", "/ping/" + keys.NewPingKey() + "/start", 404, "not found"},
			{"unknown project key", "/ping/" + storetest.RandomID("pk_") + "/job", 404, "not found"},
			{"unknown slug", "/ping/" + b.prj.PingKey + "/no-such-job", 404, "not found"},
			{"malformed key", "/ping/not-a-key", 400, `ping key "not-a-key" is neither a UUID nor a project ping key`},
			{"malformed key with a suffix", "/ping/x!y/start", 400, `ping key "x!y" is neither a UUID nor a project ping key`},
			{"no key", "/ping/", 400, "the URL has no ping key: use /ping/<uuid> or /ping/<project-ping-key>/<slug>"},
			{"exit status 256", key + "/256", 400, `exit status "256" must be between 0 and 255`},
			{"exit status -1", key + "/-1", 400, `exit status "-1" must be between 0 and 255`},
			{"unknown kind", key + "/finished", 400, `unknown ping kind "finished": use start, success, complete, fail, log, skip, cancel or an exit status 0 to 255`},
			{"rid too long", key + "?rid=" + strings.Repeat("x", 65), 400, "rid is 65 characters long; it must be at most 64"},
			{"rid with a control character", key + "?rid=a%07b", 400, "rid must hold printable characters only, not U+0007"},
			{"attempt=0", key + "?attempt=0", 400, `attempt "0" must be a whole number from 1 (the first execution) to 1000000`},
			{"attempt=x", key + "?attempt=x", 400, `attempt "x" must be a whole number from 1 (the first execution) to 1000000`},
			{"retry_in negative", key + "/fail?retry_in=-30", 400, `retry_in "-30" must be a whole number of seconds from 0 to 2592000 (30 days)`},
			{"retry_in absurd", key + "/fail?retry_in=99999999", 400, `retry_in "99999999" must be a whole number of seconds from 0 to 2592000 (30 days)`},
			{"retry_at in the past", key + "/fail?retry_at=2026-03-02T08:00:00Z", 400, `retry_at "2026-03-02T08:00:00Z" is in the past`},
			{"retry_at not RFC 3339", key + "/fail?retry_at=tomorrow", 400, `retry_at "tomorrow" is not an RFC 3339 time such as 2026-01-02T15:04:05Z`},
			{"duration_ms negative", key + "?duration_ms=-1", 400, `duration_ms "-1" must be a whole number of milliseconds from 0 to 31622400000 (366 days)`},
		}
		for _, tt := range tests {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				res := b.do(t, method, tt.path, strings.NewReader("body"))
				require.Equal(t, tt.status, res.status, "%s %s", method, tt.name)
				require.Equal(t, tt.body, res.body, "%s %s", method, tt.name)
				require.Equal(t, "100000", res.header.Get("Ping-Body-Limit"), tt.name)
			}
		}
		require.Empty(t, b.pings(t, m), "no bad ping stored anything")
		require.Equal(t, monitors.StatusNew, b.reload(t, m).State.Status)

		// The service still works after all that.
		require.Equal(t, http.StatusOK, b.get(t, key).status)
		require.Len(t, b.pings(t, m), 1)
		require.Equal(t, float64(3*2), metric(t, b.reg, "success", "not_found"))
		require.Equal(t, float64(6*2), metric(t, b.reg, "unknown", "bad_request"), "the URL's path could not be read")
		require.Equal(t, float64(4*2), metric(t, b.reg, "fail", "bad_request"))
	})
}

func TestBody(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{BodyLimit: 1000, BodyHardLimit: 5000})
		m := b.monitor(t, "job", nil)
		path := "/ping/" + m.PingKey + "/log"

		res := b.do(t, http.MethodPost, path, strings.NewReader(strings.Repeat("a", 1000)))
		require.Equal(t, http.StatusOK, res.status)
		require.Equal(t, "1000", res.header.Get("Ping-Body-Limit"))
		p := b.lastPing(t, m)
		require.Len(t, p.Body, 1000)
		require.False(t, p.BodyTruncated, "exactly at the limit")

		// 999 ASCII bytes, then a 3-byte character across the limit.
		body := strings.Repeat("b", 999) + "€" + strings.Repeat("c", 3000)
		res = b.do(t, http.MethodPost, path, strings.NewReader(body))
		require.Equal(t, http.StatusOK, res.status)
		p = b.lastPing(t, m)
		require.Equal(t, strings.Repeat("b", 999), p.Body, "cut before the character that crosses the limit")
		require.True(t, p.BodyTruncated)

		// Past the hard limit: refused, with or without Content-Length.
		n := len(b.pings(t, m))
		res = b.do(t, http.MethodPost, path, strings.NewReader(strings.Repeat("d", 5001)))
		require.Equal(t, http.StatusRequestEntityTooLarge, res.status)
		require.Equal(t, "the request body is larger than 5000 bytes", res.body)
		res = b.do(t, http.MethodPost, path, io.MultiReader(strings.NewReader(strings.Repeat("e", 6000))))
		require.Equal(t, http.StatusRequestEntityTooLarge, res.status, "chunked")
		require.Len(t, b.pings(t, m), n, "a refused body stores nothing")

		res = b.do(t, http.MethodPost, path, io.MultiReader(strings.NewReader(strings.Repeat("f", 5000))))
		require.Equal(t, http.StatusOK, res.status, "exactly at the hard limit, chunked")
		require.True(t, b.lastPing(t, m).BodyTruncated)

		res = b.do(t, http.MethodPost, path, strings.NewReader("bad \xff\x00 bytes"))
		require.Equal(t, http.StatusOK, res.status, "any content is kept as text")
		require.Equal(t, "bad \uFFFD\uFFFD bytes", b.lastPing(t, m).Body)
	})
}

func TestPausedMonitorRecordsAndStaysPaused(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{})
		m := b.monitor(t, "paused", func(m *monitors.Monitor) { m.Paused = true })
		for _, suffix := range []string{"/start", "", "/fail", "/1"} {
			b.clock.advance(time.Second)
			res := b.get(t, "/ping/"+m.PingKey+suffix)
			require.Equal(t, http.StatusOK, res.status)
		}
		require.Len(t, b.pings(t, m), 4, "every ping is recorded")
		got := b.reload(t, m)
		require.True(t, got.Paused, "no ping resumes a paused monitor")
		require.Equal(t, monitors.StatusPaused, got.State.Status)
		incidents, err := b.store.IncidentList(context.Background(), &monitors.IncidentListParams{ProjectID: b.prj.ID, MonitorID: m.ID})
		require.NoError(t, err)
		require.Empty(t, incidents, "and none is judged")
	})
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{RateLimit: 0.5, RateBurst: 3})
		m := b.monitor(t, "chatty", nil)
		other := b.monitor(t, "quiet", nil)
		for i := range 3 {
			require.Equal(t, http.StatusOK, b.get(t, "/ping/"+m.PingKey+"/log").status, "burst ping %d", i)
		}
		res := b.get(t, "/ping/"+m.PingKey+"/log")
		require.Equal(t, http.StatusTooManyRequests, res.status)
		require.Equal(t, "2", res.header.Get("Retry-After"), "one token every 2 seconds")
		require.Contains(t, res.body, "rate limit exceeded")
		require.Len(t, b.pings(t, m), 3, "the refused ping is not stored")

		require.Equal(t, http.StatusOK, b.get(t, "/ping/"+other.PingKey).status, "other keys are not held back")
		require.Equal(t, http.StatusOK, b.get(t, "/ping/"+b.prj.PingKey+"/chatty").status, "the slug URL has a bucket of its own")

		b.clock.advance(1500 * time.Millisecond)
		res = b.get(t, "/ping/"+m.PingKey+"/log")
		require.Equal(t, http.StatusTooManyRequests, res.status)
		require.Equal(t, "1", res.header.Get("Retry-After"), "half a second left, rounded up")
		b.clock.advance(500 * time.Millisecond)
		require.Equal(t, http.StatusOK, b.get(t, "/ping/"+m.PingKey+"/log").status, "a token came back")

		for range 20 {
			b.get(t, "/ping/"+m.PingKey+"/log")
		}
		require.Len(t, b.pings(t, m), 5, "a flood stores nothing past the limit")
		require.Equal(t, float64(22), metric(t, b.reg, "log", "rate_limited"))
	})
}

func TestClientAddress(t *testing.T) {
	t.Parallel()
	store := testdb.SQLite(t)
	direct := setup(t, store, ingest.Config{})
	proxied := setup(t, store, ingest.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}})
	m := direct.monitor(t, "job", nil)
	key := "/ping/" + m.PingKey

	direct.do(t, http.MethodGet, key, nil, "X-Forwarded-For", "203.0.113.7")
	require.Equal(t, "127.0.0.1", direct.lastPing(t, m).RemoteAddr, "without trusted proxies the header is ignored")

	proxied.clock.advance(time.Second)
	proxied.do(t, http.MethodGet, key, nil, "X-Forwarded-For", "203.0.113.7")
	require.Equal(t, "203.0.113.7", direct.lastPing(t, m).RemoteAddr, "from a trusted proxy")

	proxied.clock.advance(time.Second)
	proxied.do(t, http.MethodGet, key, nil, "X-Forwarded-For", "198.51.100.1, 203.0.113.8, 10.1.2.3")
	require.Equal(t, "203.0.113.8", direct.lastPing(t, m).RemoteAddr, "the nearest address that is not a trusted proxy")

	proxied.clock.advance(time.Second)
	proxied.do(t, http.MethodGet, key, nil)
	require.Equal(t, "127.0.0.1", direct.lastPing(t, m).RemoteAddr, "no header")
}

func TestGroupCommit(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{BatchSize: 50, BatchWindow: 20 * time.Millisecond})
		var ms []*monitors.Monitor
		for i := range 10 {
			ms = append(ms, b.monitor(t, fmt.Sprintf("job-%d", i), nil))
		}
		const perMonitor = 20
		var wg sync.WaitGroup
		for _, m := range ms {
			for i := range perMonitor {
				wg.Go(func() {
					res, err := http.Get(fmt.Sprintf("%s/ping/%s/log?rid=r%d", b.url, m.PingKey, i))
					if err != nil {
						t.Error(err)
						return
					}
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						t.Errorf("status %d", res.StatusCode)
					}
				})
			}
		}
		wg.Wait()
		for _, m := range ms {
			require.Len(t, b.pings(t, m), perMonitor)
		}
		count, sum := histogram(t, b.reg, "vigil_ingest_batch_size")
		require.Equal(t, float64(len(ms)*perMonitor), sum, "every ping went through a batch")
		require.Less(t, count, uint64(len(ms)*perMonitor/2), "concurrent pings share transactions")
	})
}

func histogram(t *testing.T, reg *prometheus.Registry, name string) (uint64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0, 0
}

func TestOneTransactionPerPing(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{BatchSize: 1})
		m := b.monitor(t, "job", nil)
		for range 5 {
			require.Equal(t, http.StatusOK, b.get(t, "/ping/"+m.PingKey+"/log").status)
		}
		count, sum := histogram(t, b.reg, "vigil_ingest_batch_size")
		require.Equal(t, uint64(5), count)
		require.Equal(t, float64(5), sum)
	})
}

func TestShutdownRefusesNewPings(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SQLite(t), ingest.Config{})
	m := b.monitor(t, "job", nil)
	require.Equal(t, http.StatusOK, b.get(t, "/ping/"+m.PingKey).status)
	b.stop()
	res := b.get(t, "/ping/"+m.PingKey)
	require.Equal(t, http.StatusServiceUnavailable, res.status)
	require.Equal(t, "1", res.header.Get("Retry-After"))
	require.Len(t, b.pings(t, m), 1)
}

// TestFailureLimitPerClient: pings that end in 404 or 400 count against
// the client's address; past the burst, every ping from that address gets
// 429 with Retry-After before any database work (the known key too), while
// other addresses, named by a trusted proxy, are not affected. Refilling
// lets it through again.
func TestFailureLimitPerClient(t *testing.T) {
	t.Parallel()
	store := testdb.SQLite(t)
	b := setup(t, store, ingest.Config{FailureLimit: 1, FailureBurst: 3,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	m := b.monitor(t, "known", nil)
	from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }

	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/ping/"+keys.NewPingKey(), nil, from("203.0.113.7")...).status)
	require.Equal(t, http.StatusBadRequest, b.do(t, http.MethodGet, "/ping/not-a-key/x/y/z", nil, from("203.0.113.7")...).status)
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/ping/"+m.PingKey, nil, from("203.0.113.7")...).status, "a success costs nothing")
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/ping/"+keys.NewPingKey(), nil, from("203.0.113.7")...).status)
	for _, path := range []string{"/ping/" + keys.NewPingKey(), "/ping/" + m.PingKey} {
		r := b.do(t, http.MethodGet, path, nil, from("203.0.113.7")...)
		require.Equal(t, http.StatusTooManyRequests, r.status, path)
		require.Equal(t, "1", r.header.Get("Retry-After"))
		require.Contains(t, r.body, "ended in 404 or 400")
	}
	require.Len(t, b.pings(t, m), 1, "the refused ping was not stored")
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/ping/"+keys.NewPingKey(), nil, from("198.51.100.9")...).status,
		"another address has its own bucket")

	b.clock.advance(time.Second)
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/ping/"+m.PingKey, nil, from("203.0.113.7")...).status)
}

func TestCreateWithSettings(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, open func(t *testing.T) monitors.Store) {
		b := setup(t, open(t), ingest.Config{})
		ctx := context.Background()
		base := "/ping/" + b.prj.PingKey
		get := func(slug string) (*monitors.Monitor, bool) {
			m, err := b.store.MonitorGetBySlug(ctx, b.prj.ID, slug)
			if err != nil {
				require.ErrorIs(t, err, monitors.ErrNotFound)
				return nil, false
			}
			return m, true
		}

		// A create ping with a schedule makes the monitor with it.
		res := b.get(t, base+"/nightly/start?create=1&schedule=0+2+*+*+*&tz=Europe/Berlin&grace=600&max_runtime=3600")
		require.Equal(t, http.StatusCreated, res.status, res.body)
		m, ok := get("nightly")
		require.True(t, ok)
		require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *", TZ: "Europe/Berlin",
			Dialect: monitors.DialectCronie}, m.Schedule)
		require.Equal(t, int64(600), m.GraceSeconds)
		require.Equal(t, int64(3600), m.MaxRuntimeSeconds)
		require.Equal(t, monitors.StatusRunning, m.State.Status, "the creating ping was applied")

		res = b.get(t, base+"/every-5m?create=1&every=300")
		require.Equal(t, http.StatusCreated, res.status, res.body)
		m5, _ := get("every-5m")
		require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 300}, m5.Schedule)

		res = b.get(t, base+"/k8s?create=1&schedule=%40every+5m&dialect=robfig")
		require.Equal(t, http.StatusCreated, res.status, res.body)
		mk, _ := get("k8s")
		require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "@every 5m", TZ: "UTC",
			Dialect: monitors.DialectRobfig}, mk.Schedule)

		// A bad value is a 400 naming the parameter; nothing is created
		// and no ping is stored.
		bad := []struct{ query, param string }{
			{"schedule=0+25+*+*+*", "schedule"},
			{"schedule=not+cron", "schedule"},
			{"schedule=0+2+*+*+*&tz=Mars/Olympus", "tz"},
			{"schedule=0+2+*+*+*&dialect=vixie", "dialect"},
			{"schedule=0+2+*+*+?&dialect=cronie", "schedule"},
			{"every=0", "every"},
			{"every=1.5", "every"},
			{"every=-60", "every"},
			{"grace=0", "grace"},
			{"grace=5m", "grace"},
			{"max_runtime=99999999999", "max_runtime"},
			{"schedule=0+2+*+*+*&every=60", "every"},
			{"tz=Europe/Berlin", "tz"},
			{"dialect=robfig", "dialect"},
			{"grace=60&grace=120", "grace"},
		}
		for _, tt := range bad {
			res := b.get(t, base+"/refused?create=1&"+tt.query)
			require.Equal(t, http.StatusBadRequest, res.status, tt.query)
			require.True(t, strings.HasPrefix(res.body, tt.param), "%s: %q names %s", tt.query, res.body, tt.param)
			_, ok := get("refused")
			require.False(t, ok, "%s: nothing created", tt.query)
		}
		res = b.get(t, base+"/nightly?create=1&schedule=0+25+*+*+*")
		require.Equal(t, http.StatusBadRequest, res.status, "judged the same when the monitor exists")
		require.Len(t, b.pings(t, m), 1, "the refused ping was not stored")

		// Later pings with other values change nothing without update=1.
		b.clock.advance(time.Minute)
		res = b.get(t, base+"/nightly?create=1&schedule=30+3+*+*+*&tz=UTC&grace=60")
		require.Equal(t, http.StatusOK, res.status, res.body)
		got, _ := get("nightly")
		require.Equal(t, m.Schedule, got.Schedule)
		require.Equal(t, int64(600), got.GraceSeconds)
		require.Len(t, b.pings(t, m), 2)

		// update=1 changes them, in the ping's transaction, as a person's
		// change: the settings become person fields.
		b.clock.advance(time.Minute)
		res = b.get(t, base+"/nightly/start?create=1&update=1&schedule=30+3+*+*+*&tz=UTC&grace=60&rid=r2")
		require.Equal(t, http.StatusOK, res.status, res.body)
		got, _ = get("nightly")
		require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 3 * * *", TZ: "UTC",
			Dialect: monitors.DialectCronie}, got.Schedule)
		require.Equal(t, int64(60), got.GraceSeconds)
		require.Equal(t, int64(3600), got.MaxRuntimeSeconds, "what the ping does not say is kept")
		require.True(t, got.UpdatedAt.Equal(b.clock.now()))
		require.Equal(t, monitors.StatusRunning, got.State.Status)
		require.Len(t, b.pings(t, m), 3)
		pf, err := b.store.MonitorPersonFields(ctx, b.prj.ID, []string{m.ID})
		require.NoError(t, err)
		require.Equal(t, []string{"schedule", "grace_seconds"}, pf[m.ID])

		// update=1 works by the monitor's own ping key too; a bad value
		// changes nothing and stores no ping.
		res = b.get(t, "/ping/"+m.PingKey+"?update=1&every=7200")
		require.Equal(t, http.StatusOK, res.status, res.body)
		got, _ = get("nightly")
		require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 7200}, got.Schedule)
		require.Len(t, b.pings(t, m), 4)
		res = b.get(t, "/ping/"+m.PingKey+"?update=1&schedule=61+*+*+*+*")
		require.Equal(t, http.StatusBadRequest, res.status)
		require.Contains(t, res.body, "schedule: ")
		again, _ := get("nightly")
		require.Equal(t, got.Schedule, again.Schedule)
		require.Len(t, b.pings(t, m), 4)

		// Without create=1 or update=1 the settings mean nothing, as
		// before: the ping is taken.
		res = b.get(t, base+"/nightly?schedule=bogus")
		require.Equal(t, http.StatusOK, res.status)
	})
}
