package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/web"
)

// benchRuns is how many runs each monitor of the list benchmark has.
const benchRuns = 20

// BenchmarkMonitorList measures the monitor list that every open dashboard
// refreshes every few seconds, on both stores, for a project of 500 and
// one of 5,000 monitors with benchRuns runs each. Each sub-benchmark
// reports the p50 and p95 of its iterations (ms) besides the mean:
//
//   - recent-runs/full reads the runs the sparklines draw with
//     RunListRecent (whole runs), the baseline of recent-runs/brief, which
//     reads them as the list does, with RunBriefList;
//   - refresh/cold is the whole refresh request (session, monitors, runs,
//     rows) with every row rendered through the template, as when every
//     row changed: the baseline of the others;
//   - refresh is the same request as an open list repeats it, the rows
//     that did not change taken from the row cache;
//   - after-ping is the refresh after one monitor of the page was pinged
//     (the ping not timed): a list in which one row changed;
//   - unchanged is the refresh of a list that did not change, sent with
//     the ETag of the last answer: 304;
//   - at 5,000 monitors, the first page (500 rows) and a filter (one tag,
//     50 monitors) as a person uses a list that long.
func BenchmarkMonitorList(b *testing.B) {
	for _, store := range []struct {
		name string
		open func(tb testing.TB) monitors.Store
	}{
		{"sqlite", func(tb testing.TB) monitors.Store { return testdb.SQLite(tb) }},
		{"postgres", func(tb testing.TB) monitors.Store { return testdb.Postgres(tb) }},
	} {
		for _, size := range []int{500, 5000} {
			b.Run(store.name+"/"+strconv.Itoa(size), func(b *testing.B) {
				benchList(b, store.open(b), size)
			})
		}
	}
}

func benchList(b *testing.B, store monitors.Store, size int) {
	ctx := context.Background()
	now := time.Now()
	p, err := store.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "bench", PingKey: keys.NewProjectPingKey(), Now: now})
	require.NoError(b, err)
	ids := make([]string, size)
	pingKeys := make([]string, size)
	var pings []*monitors.PingRecordParams
	flush := func() {
		res, err := store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: pings})
		require.NoError(b, err)
		for _, r := range res {
			require.NoError(b, r.Err)
		}
		pings = pings[:0]
	}
	for i := range size {
		m := &monitors.Monitor{ID: keys.NewID(), ProjectID: p.ID, Name: fmt.Sprintf("job-%04d", i), PingKey: keys.NewPingKey(),
			Tags: []string{"bench", fmt.Sprintf("team-%02d", i%100)}, CreatedAt: now, UpdatedAt: now,
			Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}}
		m.ApplyDefaults()
		require.NoError(b, store.MonitorInsert(ctx, m))
		ids[i] = m.ID
		pingKeys[i] = m.PingKey
		for r := range benchRuns {
			at := now.Add(-time.Duration(benchRuns-r) * time.Hour)
			pings = append(pings,
				&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: at}},
				&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at.Add(time.Duration(r+1) * time.Second)}})
		}
		if len(pings) >= 1000 {
			flush()
		}
	}
	if len(pings) > 0 {
		flush()
	}
	shown := ids[:min(size, 500)]

	report := func(b *testing.B, took []time.Duration) {
		slices.Sort(took)
		ms := func(q float64) float64 {
			return float64(took[min(len(took)-1, int(q*float64(len(took))))].Microseconds()) / 1000
		}
		b.ReportMetric(ms(0.5), "p50-ms")
		b.ReportMetric(ms(0.95), "p95-ms")
	}
	timed := func(b *testing.B, fn func()) {
		var took []time.Duration
		for b.Loop() {
			start := time.Now()
			fn()
			took = append(took, time.Since(start))
		}
		report(b, took)
	}
	if size == 500 {
		b.Run("recent-runs/full", func(b *testing.B) {
			timed(b, func() {
				runs, err := store.RunListRecent(ctx, &monitors.RunListRecentParams{ProjectID: p.ID, MonitorIDs: shown, PerMonitor: benchRuns})
				require.NoError(b, err)
				require.Len(b, runs, len(shown))
			})
		})
		b.Run("recent-runs/brief", func(b *testing.B) {
			timed(b, func() {
				runs, err := store.RunBriefList(ctx, &monitors.RunListRecentParams{ProjectID: p.ID, MonitorIDs: shown, PerMonitor: benchRuns})
				require.NoError(b, err)
				require.Len(b, runs, len(shown))
			})
		})
	}

	h, err := web.New(web.Config{Store: store, BaseURL: "http://vigil.test"})
	require.NoError(b, err)
	e := echo.New()
	h.Register(e)
	u, err := store.UserCreate(ctx, &monitors.UserCreateParams{ID: keys.NewID(), Email: "bench@example.com",
		PasswordHash: "x", ProjectIDs: []string{p.ID}, Now: now})
	require.NoError(b, err)
	token := "bench-session-token"
	sum := sha256.Sum256([]byte(token))
	_, err = store.SessionCreate(ctx, &monitors.SessionCreateParams{ID: keys.NewID(), UserID: u.ID,
		TokenHash: hex.EncodeToString(sum[:]), CSRFToken: "c", Now: now, ExpiresAt: now.Add(time.Hour)})
	require.NoError(b, err)
	refresh := func(b *testing.B, query, etag string, want int) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/"+query, nil)
		req.Header.Set("HX-Request", "true")
		req.Header.Set("HX-Target", "monitor-rows")
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		req.AddCookie(&http.Cookie{Name: "vigil_session", Value: token})
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if want != 0 {
			require.Equal(b, want, rec.Code, rec.Body.String())
		}
		return rec
	}
	queries := []struct{ name, query string }{{"all", ""}}
	if size > 500 {
		queries = []struct{ name, query string }{{"page-1", ""}, {"tag", "?tag=team-07"}}
	}
	for _, q := range queries {
		b.Run(q.name+"/refresh/cold", func(b *testing.B) {
			timed(b, func() {
				h.ForgetRows()
				refresh(b, q.query, "", http.StatusOK)
			})
		})
		b.Run(q.name+"/refresh", func(b *testing.B) {
			timed(b, func() { refresh(b, q.query, "", http.StatusOK) })
		})
		b.Run(q.name+"/after-ping", func(b *testing.B) {
			// One monitor of the page pinged before each refresh (not
			// timed): the refresh of a list in which one row changed.
			n := 0
			var took []time.Duration
			for b.Loop() {
				key := pingKeys[(n*100+7)%size] // in team-07, so on the tag's page too
				n++
				res, err := store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
					{PingKey: key, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: time.Now()}}}})
				require.NoError(b, err)
				require.NoError(b, res[0].Err)
				start := time.Now()
				refresh(b, q.query, "", http.StatusOK)
				took = append(took, time.Since(start))
			}
			report(b, took)
		})
		b.Run(q.name+"/unchanged", func(b *testing.B) {
			etag := refresh(b, q.query, "", http.StatusOK).Header().Get("ETag")
			require.NotEmpty(b, etag)
			timed(b, func() {
				rec := refresh(b, q.query, etag, 0)
				if rec.Code == http.StatusOK { // a relative time moved on: the list did change
					etag = rec.Header().Get("ETag")
					return
				}
				require.Equal(b, http.StatusNotModified, rec.Code)
			})
		})
	}
}
