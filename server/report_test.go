package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/webhook"
	"github.com/vigilhq/vigil/server"
)

// setClock is a clock the test sets, shared by replicas.
type setClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *setClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *setClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// reportReplica starts a server on dbURL with the clock, whose report
// loop looks once at start and then only when the test asks
// (ReportOnce), and stops it when stop is called or the test ends.
func reportReplica(t *testing.T, dbURL string, clock *setClock) (srv *server.Server, base string, stop func()) {
	t.Helper()
	cfg := testConfig(dbURL)
	cfg.NowFunc = clock.Now
	cfg.Delivery.AllowPrivate = true // the receiver is on loopback
	cfg.BaseURL = "https://vigil.example.com"
	cfg.Evaluator.ReportInterval = 24 * time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	base = "http://" + srv.Addr()
	require.Eventually(t, func() bool {
		code, _ := get(t, base+"/readyz")
		return code == http.StatusOK
	}, 20*time.Second, 10*time.Millisecond, "the server did not get ready")
	return srv, base, stop
}

// deliveryOf is the delivery ID a report's request names in its
// Vigil-Delivery-Id ("report-<report>.<delivery>").
func deliveryOf(t *testing.T, req notifiertest.Request) int64 {
	t.Helper()
	h := req.Header.Get(webhook.DeliveryIDHeader)
	i := strings.LastIndexByte(h, '.')
	require.True(t, strings.HasPrefix(h, "report-") && i > 0, "Vigil-Delivery-Id %q", h)
	id, err := strconv.ParseInt(h[i+1:], 10, 64)
	require.NoError(t, err)
	return id
}

// waitSent waits until the delivery is sent.
func waitSent(t *testing.T, store monitors.Store, projectID string, deliveryID int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := store.DeliveryGet(context.Background(), projectID, deliveryID)
		require.NoError(t, err)
		return d.State == monitors.DeliverySent
	}, 20*time.Second, 10*time.Millisecond, "the report was not delivered")
}

// TestReportSentOnceByThreeReplicas runs three servers on one PostgreSQL
// database with one clock, at the end of the week SeedReportWeek plays.
// All three look for reports at once: one claims the report, the others
// find it claimed, and the webhook receiver gets it once, with the numbers
// worked out by hand in SeedReportWeek; looking again sends nothing.
func TestReportSentOnceByThreeReplicas(t *testing.T) {
	t.Parallel()
	dbURL := testdb.PostgresURL(t)
	clock := &setClock{now: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)}
	recv := notifiertest.NewReceiver(t, nil)
	var replicas []*server.Server
	var base string
	for i := range 3 {
		srv, b, _ := reportReplica(t, dbURL, clock)
		replicas = append(replicas, srv)
		if i == 0 {
			base = b
		}
	}
	first := replicas[0]
	key, prj := first.Bootstrapped.APIKey, first.Bootstrapped.Project
	ms := storetest.SeedReportWeek(t, first.Store(), prj.ID)

	var ch struct{ ID, Report string }
	require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/channels", key, map[string]any{
		"kind": "webhook", "name": "weekly report", "report": "weekly",
		"config": map[string]any{"url": recv.URL + "/reports", "secret": "0123456789abcdef-secret"}}, &ch))
	require.Equal(t, "weekly", ch.Report)

	// Monday 00:00:30: the week of 23-29 November is due.
	clock.Set(storetest.ReportWeekEnd.Add(30 * time.Second))
	look := func() (claimed []*monitors.Delivery, taken int) {
		t.Helper()
		var (
			wg sync.WaitGroup
			mu sync.Mutex
		)
		for _, srv := range replicas {
			wg.Go(func() {
				r, err := srv.ReportOnce(context.Background())
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("report once: %v", err)
					return
				}
				claimed, taken = append(claimed, r.Claimed...), taken+r.Taken
			})
		}
		wg.Wait()
		return claimed, taken
	}
	claimed, taken := look()
	require.Len(t, claimed, 1, "one replica claims the report")
	// The others either lose the claim or, looking after it committed,
	// find the period reported already: both are right.
	require.LessOrEqual(t, taken, 2, "the others find it claimed")
	d := claimed[0]
	waitSent(t, first.Store(), prj.ID, d.ID)

	claimed, taken = look()
	require.Empty(t, claimed, "sent: not due any more")
	require.Zero(t, taken)

	reqs := recv.Requests()
	require.Len(t, reqs, 1, "three replicas, one report")
	req := reqs[0]
	reportID := ch.ID + ".weekly.2026-11-23"
	require.Equal(t, "report-"+reportID+"."+strconv.FormatInt(d.ID, 10), req.Header.Get(webhook.DeliveryIDHeader))
	require.NotEmpty(t, req.Header.Get(webhook.SignatureHeader))
	var p webhook.ReportPayload
	require.NoError(t, json.Unmarshal(req.Body, &p), string(req.Body))
	require.Equal(t, "report.weekly", p.Event)
	r := p.Report
	require.Equal(t, reportID, r.ID)
	require.Equal(t, "weekly", r.Period)
	require.True(t, r.Start.Equal(storetest.ReportWeekStart))
	require.True(t, r.End.Equal(storetest.ReportWeekEnd))
	require.Equal(t, "UTC", r.Zone)
	require.Equal(t, prj.Name, r.Project)
	require.Equal(t, "https://vigil.example.com/", r.URL)
	require.Equal(t, 3, r.Monitors)
	require.Equal(t, 9, r.Occurrences)
	require.Equal(t, 6, r.OnTime)
	require.Equal(t, []webhook.PayloadReportIncidents{
		{Kind: "missed", Count: 1, DurationSeconds: (23*time.Hour + 55*time.Minute).Seconds()},
		{Kind: "failed", Count: 2, DurationSeconds: (28*time.Hour + 25*time.Second).Seconds()},
	}, r.Incidents)
	slugs := func(ms []webhook.PayloadReportMonitor) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Slug)
		}
		return out
	}
	require.Equal(t, []string{"nightly", "long"}, slugs(r.WithIncidents))
	require.Equal(t, []string{"long", "nightly"}, slugs(r.Slowest))
	require.Equal(t, []string{"nightly"}, slugs(r.MostRetried))
	require.Equal(t, 1, r.MostRetried[0].Retries)
	require.Equal(t, []string{"quiet"}, slugs(r.NeverPinged))
	require.Equal(t, "https://vigil.example.com/monitors/"+ms["quiet"].ID, r.NeverPinged[0].URL)
	require.Equal(t, 60.0, r.Slowest[1].RunP95Seconds)
}

// TestReportAfterRestart: a server down when a week ends sends that
// week's report when it is back, once; a restart after that sends
// nothing more. Turning a channel's report on sends the last complete
// period's report at once.
func TestReportAfterRestart(t *testing.T) {
	t.Parallel()
	eachDatabase(t, func(t *testing.T, dbURL string) {
		clock := &setClock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} // a Sunday
		recv := notifiertest.NewReceiver(t, nil)
		a, base, stopA := reportReplica(t, dbURL, clock)
		key, prj := a.Bootstrapped.APIKey, a.Bootstrapped.Project
		var ch struct{ ID string }
		require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/channels", key, map[string]any{
			"kind": "webhook", "name": "weekly report", "report": "weekly",
			"config": map[string]any{"url": recv.URL + "/reports"}}, &ch))
		r, err := a.ReportOnce(context.Background())
		require.NoError(t, err)
		require.Len(t, r.Claimed, 1, "the week before, at once")
		waitSent(t, a.Store(), prj.ID, r.Claimed[0].ID)
		stopA()

		// Down through Monday 00:00; back at 09:00.
		clock.Set(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
		b, _, stopB := reportReplica(t, dbURL, clock)
		require.Eventually(t, func() bool { return len(recv.Requests()) == 2 }, 20*time.Second, 10*time.Millisecond,
			"the report due while Vigil was down is sent when it is back")
		waitSent(t, b.Store(), prj.ID, deliveryOf(t, recv.Requests()[1]))
		r, err = b.ReportOnce(context.Background())
		require.NoError(t, err)
		require.Empty(t, r.Claimed)
		stopB()

		clock.Set(time.Date(2026, 11, 30, 9, 5, 0, 0, time.UTC))
		c, _, _ := reportReplica(t, dbURL, clock)
		r, err = c.ReportOnce(context.Background())
		require.NoError(t, err)
		require.Empty(t, r.Claimed, "a restart after it was sent sends nothing")
		require.Zero(t, r.Taken)

		reqs := recv.Requests()
		require.Len(t, reqs, 2)
		var starts []string
		for _, req := range reqs {
			var p webhook.ReportPayload
			require.NoError(t, json.Unmarshal(req.Body, &p))
			starts = append(starts, p.Report.Start.Format(time.DateOnly))
		}
		require.Equal(t, []string{"2026-11-16", "2026-11-23"}, starts)
		chs, err := c.Store().ReportChannels(context.Background())
		require.NoError(t, err)
		require.Len(t, chs, 1)
		require.True(t, chs[0].LastStart.Equal(storetest.ReportWeekStart))
	})
}
