package delivery_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// T0 is when the tests' incidents happen, on the injected clock. River
// runs jobs on the real clock; delivery decisions use the injected one.
var T0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const baseURL = "https://vigil.example.com"

// clock is an injected clock that tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// dialects are the two databases every delivery test runs on.
var dialects = []string{"sqlite", "postgres"}

// harness is a store with its enqueue hook and a running delivery service
// on a database of its own.
type harness struct {
	t       *testing.T
	dialect string
	db      string // SQLite path or PostgreSQL URL
	clock   *clock
	reg     *prometheus.Registry
	cfg     delivery.Config

	store monitors.Store
	svc   *delivery.Service
	prj   *monitors.Project
	stop  func()
}

// newHarness opens a fresh database of dialect and starts delivery on it.
// edit, when set, changes the service's configuration (Store, NowFunc and
// Registerer are set after it).
func newHarness(t *testing.T, dialect string, edit func(c *delivery.Config)) *harness {
	t.Helper()
	h := &harness{t: t, dialect: dialect, clock: &clock{now: T0}, reg: prometheus.NewRegistry()}
	switch dialect {
	case "sqlite":
		h.db = testdb.SQLitePath(t)
	case "postgres":
		h.db = testdb.PostgresURL(t)
	}
	h.cfg = delivery.Config{
		BaseURL:      baseURL,
		AllowPrivate: true,
		Timeout:      5 * time.Second,
		Backoff:      delivery.Backoff{Base: 5 * time.Millisecond, Max: 20 * time.Millisecond, Jitter: -1},
		PollInterval: 20 * time.Millisecond,
		StopTimeout:  5 * time.Second,
		Logger:       testdb.Logger(t),
	}
	if edit != nil {
		edit(&h.cfg)
	}
	h.start()
	h.prj = storetest.MustProject(t, h.store)
	return h
}

// start opens the store on the harness's database and starts a delivery
// service on it; restart calls it again after stop.
func (h *harness) start() {
	t := h.t
	t.Helper()
	ctx := context.Background()
	log := testdb.Logger(t)
	cfg := h.cfg
	cfg.NowFunc, cfg.Registerer = h.clock.Now, h.reg
	switch h.dialect {
	case "sqlite":
		enq, err := delivery.NewSQLiteEnqueuer()
		require.NoError(t, err)
		s, err := sqlitestore.Open(ctx, h.db, sqlitestore.Options{Logger: log, EnqueueDeliveries: enq.Enqueue})
		require.NoError(t, err)
		require.NoError(t, delivery.MigrateSQLite(ctx, s.DB(), log))
		cfg.Store = s
		h.store = s
		h.svc, err = delivery.NewSQLite(s.DB(), cfg)
		require.NoError(t, err)
	case "postgres":
		enq, err := delivery.NewPostgresEnqueuer()
		require.NoError(t, err)
		s, err := pgstore.Open(ctx, h.db, pgstore.Options{Logger: log, EnqueueDeliveries: enq.Enqueue})
		require.NoError(t, err)
		require.NoError(t, delivery.MigratePostgres(ctx, s.Pool(), log))
		cfg.Store = s
		h.store = s
		h.svc, err = delivery.NewPostgres(s.Pool(), cfg)
		require.NoError(t, err)
	}
	require.NoError(t, h.svc.Start(ctx))
	var once sync.Once
	store, svc := h.store, h.svc
	h.stop = func() {
		once.Do(func() {
			require.NoError(t, svc.Stop(context.Background()))
			require.NoError(t, store.Close())
		})
	}
	t.Cleanup(h.stop)
}

// restart stops the service and closes the store, then opens both again on
// the same database, as a restart of Vigil does.
func (h *harness) restart() {
	h.stop()
	h.start()
}

// channel creates a channel of the harness's project.
func (h *harness) channel(kind, name string, config any, isDefault bool) *monitors.Channel {
	h.t.Helper()
	raw, err := json.Marshal(config)
	require.NoError(h.t, err)
	ch, err := h.store.ChannelCreate(context.Background(), &monitors.ChannelCreateParams{ID: storetest.RandomID("ch_"),
		ProjectID: h.prj.ID, Kind: kind, Name: name, Config: raw, IsDefault: isDefault, Now: T0})
	require.NoError(h.t, err)
	return ch
}

// monitor creates a monitor that sends to channels (or to the project's
// defaults when there are none).
func (h *harness) monitor(slug string, channels ...*monitors.Channel) *monitors.Monitor {
	h.t.Helper()
	return storetest.MustMonitor(h.t, h.store, h.prj.ID, slug, func(m *monitors.Monitor) {
		m.Tags = []string{"etl"}
		for _, ch := range channels {
			m.Channels = append(m.Channels, ch.ID)
		}
	})
}

// fail records a final failure of m at the clock's time, which opens an
// incident (or updates the open one), and returns the open incident.
func (h *harness) fail(m *monitors.Monitor) *monitors.Incident {
	h.t.Helper()
	storetest.MustRecord(h.t, h.store, storetest.Ping(m, monitors.PingFail, h.clock.Now()))
	ins, err := h.store.IncidentList(context.Background(), &monitors.IncidentListParams{ProjectID: h.prj.ID,
		MonitorID: m.ID, OpenOnly: true})
	require.NoError(h.t, err)
	require.Len(h.t, ins, 1)
	return ins[0]
}

// succeed records a success of m at the clock's time, which resolves its
// incident.
func (h *harness) succeed(m *monitors.Monitor) {
	h.t.Helper()
	storetest.MustRecord(h.t, h.store, storetest.Ping(m, monitors.PingSuccess, h.clock.Now()))
}

func (h *harness) deliveries(incidentIDs ...string) []*monitors.Delivery {
	h.t.Helper()
	ds, err := h.store.DeliveryList(context.Background(), &monitors.DeliveryListParams{ProjectID: h.prj.ID,
		IncidentIDs: incidentIDs})
	require.NoError(h.t, err)
	return ds
}

// settled waits, a bounded time, until the incident has want deliveries
// and none is pending, and returns them.
func (h *harness) settled(incidentID string, want int) []*monitors.Delivery {
	h.t.Helper()
	var ds []*monitors.Delivery
	require.Eventually(h.t, func() bool {
		ds = h.deliveries(incidentID)
		if len(ds) != want {
			return false
		}
		for _, d := range ds {
			if d.State == monitors.DeliveryPending {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond, "deliveries of incident %s did not settle", incidentID)
	return ds
}

// attempts waits until delivery id has logged at least n attempts.
func (h *harness) attempts(incidentID string, id int64, n int) []*monitors.DeliveryAttempt {
	h.t.Helper()
	var as []*monitors.DeliveryAttempt
	require.Eventually(h.t, func() bool {
		for _, d := range h.deliveries(incidentID) {
			if d.ID == id {
				as = d.AttemptLog
			}
		}
		return len(as) >= n
	}, 20*time.Second, 10*time.Millisecond, "delivery %d did not log %d attempts", id, n)
	return as
}

func outcomes(as []*monitors.DeliveryAttempt) []monitors.AttemptOutcome {
	out := make([]monitors.AttemptOutcome, len(as))
	for i, a := range as {
		out[i] = a.Outcome
	}
	return out
}

// rewriteClient returns an HTTP client that may reach loopback and sends
// each request for one of the hosts in routes to the receiver given for
// it, over plain HTTP, keeping the path: vendors' APIs (PagerDuty,
// Opsgenie, Telegram) are then real receivers in the test.
func rewriteClient(t *testing.T, routes map[string]*notifiertest.Receiver) *http.Client {
	base := notifiertest.HTTPClient(t)
	next := base.Transport
	c := *base
	c.Transport = roundTripper(func(req *http.Request) (*http.Response, error) {
		if r, ok := routes[req.URL.Hostname()]; ok {
			u, err := url.Parse(r.URL)
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.URL.Scheme, req.URL.Host, req.Host = u.Scheme, u.Host, u.Host
		}
		return next.RoundTrip(req)
	})
	return &c
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// statuses returns a receiver handler that answers with each status in
// turn, then 200 for ever.
func statuses(codes ...int) http.HandlerFunc {
	var (
		mu sync.Mutex
		i  int
	)
	return func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		code := http.StatusOK
		if i < len(codes) {
			code = codes[i]
		}
		i++
		mu.Unlock()
		w.WriteHeader(code)
	}
}

// mailServer is a real SMTP server (go-smtp) on 127.0.0.1 that keeps every
// message it accepts.
type mailServer struct {
	Port int

	mu       sync.Mutex
	messages []mail
}

type mail struct {
	From string
	To   []string
	Data string
}

func (s *mailServer) Messages() []mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mail(nil), s.messages...)
}

type mailSession struct {
	srv *mailServer
	msg mail
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error { s.msg.From = from; return nil }
func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.msg.To = append(s.msg.To, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.msg.Data = string(b)
	s.srv.mu.Lock()
	s.srv.messages = append(s.srv.messages, s.msg)
	s.srv.mu.Unlock()
	return nil
}

func (s *mailSession) Reset()        { s.msg = mail{} }
func (s *mailSession) Logout() error { return nil }

func startMailServer(t *testing.T) *mailServer {
	t.Helper()
	srv := &mailServer{}
	s := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &mailSession{srv: srv}, nil
	}))
	s.Domain = "localhost"
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv.Port = l.Addr().(*net.TCPAddr).Port
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(l)
	}()
	t.Cleanup(func() {
		_ = s.Close()
		<-done
	})
	return srv
}

// eventOf returns the "event" of a webhook body.
func eventOf(t *testing.T, body []byte) string {
	t.Helper()
	var p struct {
		Event string `json:"event"`
	}
	require.NoError(t, json.Unmarshal(body, &p))
	return p.Event
}

// jobsEventually waits until River's jobs, counted by state, are want:
// River records a job's end in batches, after the attempt.
func (h *harness) jobsEventually(want map[string]int) {
	h.t.Helper()
	var got map[string]int
	require.Eventually(h.t, func() bool {
		got = h.jobStates()
		return fmt.Sprint(got) == fmt.Sprint(want)
	}, 20*time.Second, 10*time.Millisecond, "River's jobs: want %v", want)
}

// snoozes returns the most times any River job was snoozed.
func (h *harness) snoozes() int {
	h.t.Helper()
	db, err := sql.Open("sqlite", h.db)
	require.NoError(h.t, err)
	defer db.Close()
	var n sql.NullInt64
	require.NoError(h.t, db.QueryRow(`SELECT max(json_extract(metadata, '$.snoozes')) FROM river_job`).Scan(&n))
	return int(n.Int64)
}

// jobStates counts the River jobs of the harness's database by state.
func (h *harness) jobStates() map[string]int {
	return h.jobCounts(`SELECT state, count(*) FROM river_job GROUP BY state`)
}

// jobQueues counts the River jobs of the harness's database by queue.
func (h *harness) jobQueues() map[string]int {
	return h.jobCounts(`SELECT queue, count(*) FROM river_job GROUP BY queue`)
}

// jobCounts runs q, which gives (key, count) rows, on the harness's
// database.
func (h *harness) jobCounts(q string) map[string]int {
	h.t.Helper()
	out := map[string]int{}
	var (
		db  *sql.DB
		err error
	)
	switch h.dialect {
	case "sqlite":
		db, err = sql.Open("sqlite", h.db)
	default:
		db, err = sql.Open("pgx", h.db)
	}
	require.NoError(h.t, err)
	defer db.Close()
	rows, err := db.Query(q)
	require.NoError(h.t, err)
	defer rows.Close()
	for rows.Next() {
		var (
			state string
			n     int
		)
		require.NoError(h.t, rows.Scan(&state, &n))
		out[strings.TrimSpace(state)] = n
	}
	require.NoError(h.t, rows.Err())
	return out
}
