package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/web"
)

// TestMonitorListRefreshIsNeverStale refreshes a list as a browser does
// (If-None-Match with the ETag of what it shows) through every kind of
// change, on both stores, and after each compares what the browser shows
// with the list a dashboard that keeps nothing (no rows, sparklines or
// pages) draws at the same instant: they are equal after every step, so
// the kept pages, the marker and the ETag never let a change go unseen.
// Each change is required to be answered 200, and a refresh with nothing
// changed 304; a refresh without an ETag, after each, is the same list.
func TestMonitorListRefreshIsNeverStale(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		fresh, err := web.New(web.Config{Store: b.store, BaseURL: "http://vigil.test", NowFunc: b.clock.now, Logger: testdb.Logger(t)})
		require.NoError(t, err)
		e := echo.New()
		fresh.Register(e)
		freshSrv := httptest.NewServer(e)
		t.Cleanup(freshSrv.Close)

		job := b.monitor(t, b.project.ID, "job")
		other := b.monitor(t, b.project.ID, "other")
		c := b.signIn(t, "ada@example.com", b.project.ID)
		// The same session (the cookie jar ignores ports) on the
		// dashboard that keeps nothing.
		oracle := &client{t: t, b: &bundle{srv: freshSrv}, http: c.http}

		shown := map[string]string{} // by query: the fragment the browser shows
		tags := map[string]string{}
		refresh := func(query string) int {
			t.Helper()
			h := map[string]string{"HX-Request": "true", "HX-Target": "monitor-rows"}
			if tag := tags[query]; tag != "" {
				h["If-None-Match"] = tag
			}
			r := c.do(http.MethodGet, "/"+query, nil, h)
			switch r.status {
			case http.StatusOK:
				shown[query], tags[query] = r.body, r.header.Get("ETag")
			case http.StatusNotModified:
			default:
				t.Fatalf("refresh %q: %d %s", query, r.status, r.body)
			}
			fresh.ForgetRows()
			want := oracle.do(http.MethodGet, "/"+query, nil, map[string]string{"HX-Request": "true", "HX-Target": "monitor-rows"})
			require.Equal(t, http.StatusOK, want.status)
			require.Equal(t, want.body, shown[query], "refresh %q shows what the list is", query)
			// A browser that shows nothing yet (no If-None-Match) is
			// answered the list too, a kept draw or a new one.
			delete(h, "If-None-Match")
			first := c.do(http.MethodGet, "/"+query, nil, h)
			require.Equal(t, http.StatusOK, first.status)
			require.Equal(t, want.body, first.body, "refresh %q without an ETag shows what the list is", query)
			require.Equal(t, tags[query], first.header.Get("ETag"), "refresh %q without an ETag", query)
			return r.status
		}
		queries := []string{"", "?status=up", "?status=late", "?q=jo", "?tag=nightly"}
		step := func(what string, changes bool, fn func()) {
			t.Helper()
			fn()
			for _, q := range queries {
				status := refresh(q)
				if changes && q == "" {
					require.Equal(t, http.StatusOK, status, "%s: the list changed", what)
				}
				require.Equal(t, http.StatusNotModified, refresh(q), "%s: then nothing changed", what)
			}
		}
		ping := func(m *monitors.Monitor, kind monitors.PingKind) {
			t.Helper()
			res, err := b.store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
				{PingKey: m.PingKey, Ping: monitors.Ping{Kind: kind, At: b.clock.now()}}}})
			require.NoError(t, err)
			require.NoError(t, res[0].Err)
		}

		step("the first refresh", true, func() {})
		step("nothing", false, func() {})
		step("a monitor added", true, func() { b.monitor(t, b.project.ID, "added") })
		step("a start ping", true, func() { ping(job, monitors.PingStart) })
		b.clock.advance(10 * time.Second)
		step("ten seconds", true, func() {})
		// Time alone, by less than and more than the steps of the
		// relative times: a 304 only while nothing drawn changed.
		for _, d := range []time.Duration{300 * time.Millisecond, 700 * time.Millisecond, 40 * time.Second, 30 * time.Second} {
			b.clock.advance(d)
			step("time passing", false, func() {})
		}
		step("a success ping (a new point of the sparkline)", true, func() { ping(job, monitors.PingSuccess) })
		for range 12 {
			b.clock.advance(time.Second)
			ping(other, monitors.PingStart)
			b.clock.advance(time.Second)
			ping(other, monitors.PingSuccess)
		}
		step("twelve runs", true, func() {})
		step("a pruning of the runs the sparkline draws", true, func() {
			n, err := b.store.PingPrune(ctx, &monitors.PingPruneParams{KeepRuns: 10})
			require.NoError(t, err)
			require.NotZero(t, n)
		})
		step("a tag", true, func() {
			_, err := b.store.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.project.ID, ID: other.ID,
				Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
					m.Tags = []string{"nightly"}
					return nil, nil
				}})
			require.NoError(t, err)
		})
		// Up to the instant job's expected time passes: late, by time
		// alone, in the counts and the filters too.
		m, err := b.store.MonitorGet(ctx, b.project.ID, job.ID)
		require.NoError(t, err)
		require.Equal(t, monitors.StatusUp, m.State.Status)
		b.clock.advance(m.State.Expected.Sub(b.clock.now()) - time.Second)
		step("a second before it is late", true, func() {})
		b.clock.advance(time.Second)
		step("its expected time", true, func() {})
		require.Contains(t, shown["?status=late"], `data-slug="job"`)
		require.NotContains(t, shown["?status=up"], `data-slug="job"`)
		step("an incident", true, func() {
			b.clock.advance(m.Grace() + time.Minute)
			res, err := b.store.MonitorEvaluateDue(ctx, &monitors.EvaluateDueParams{Now: b.clock.now(), Limit: 100})
			require.NoError(t, err)
			require.NotEmpty(t, res.Evaluated)
		})
		step("a pause", true, func() {
			_, err := b.store.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.project.ID, ID: job.ID,
				Fn: func(m *monitors.Monitor) (*monitors.Transition, error) { return monitors.Pause(m, b.clock.now()) }})
			require.NoError(t, err)
		})
		step("a monitor deleted", true, func() { require.NoError(t, b.store.MonitorDelete(ctx, b.project.ID, other.ID)) })
		step("nothing again", false, func() {})
		for _, d := range []time.Duration{time.Second, time.Minute, time.Hour, 20 * time.Hour, 3 * 24 * time.Hour, 9 * 24 * time.Hour} {
			b.clock.advance(d)
			step("time passing after it all", false, func() {})
		}
	})
}
