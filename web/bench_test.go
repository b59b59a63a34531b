package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/web"
)

// Sizes of the list benchmark.
const (
	benchMonitors = 500
	benchRuns     = 20
)

// BenchmarkMonitorList measures the monitor list that every open dashboard
// refreshes every few seconds, over benchMonitors monitors with benchRuns
// runs each, on both stores:
//
//   - recent-runs/one-query reads the runs the sparklines draw with
//     RunListRecent, as the list does;
//   - recent-runs/per-monitor, the baseline, reads them with one RunList
//     per monitor;
//   - rows is the whole refresh request: session, monitors, runs and the
//     rendered rows.
func BenchmarkMonitorList(b *testing.B) {
	for name, open := range map[string]func(tb testing.TB) monitors.Store{
		"sqlite":   func(tb testing.TB) monitors.Store { return testdb.SQLite(tb) },
		"postgres": func(tb testing.TB) monitors.Store { return testdb.Postgres(tb) },
	} {
		b.Run(name, func(b *testing.B) {
			store := open(b)
			ctx := context.Background()
			now := time.Now()
			p, err := store.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "bench", PingKey: keys.NewProjectPingKey(), Now: now})
			require.NoError(b, err)
			ids := make([]string, benchMonitors)
			var pings []*monitors.PingRecordParams
			for i := range benchMonitors {
				m := &monitors.Monitor{ID: keys.NewID(), ProjectID: p.ID, Name: fmt.Sprintf("job-%03d", i), PingKey: keys.NewPingKey(),
					Tags: []string{"bench"}, CreatedAt: now, UpdatedAt: now,
					Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}}
				m.ApplyDefaults()
				require.NoError(b, store.MonitorInsert(ctx, m))
				ids[i] = m.ID
				for r := range benchRuns {
					at := now.Add(-time.Duration(benchRuns-r) * time.Hour)
					pings = append(pings,
						&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: at}},
						&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at.Add(time.Duration(r+1) * time.Second)}})
				}
			}
			for start := 0; start < len(pings); start += 1000 {
				res, err := store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: pings[start:min(start+1000, len(pings))]})
				require.NoError(b, err)
				for _, r := range res {
					require.NoError(b, r.Err)
				}
			}

			b.Run("recent-runs/one-query", func(b *testing.B) {
				for b.Loop() {
					runs, err := store.RunListRecent(ctx, &monitors.RunListRecentParams{ProjectID: p.ID, MonitorIDs: ids, PerMonitor: benchRuns})
					require.NoError(b, err)
					require.Len(b, runs, benchMonitors)
				}
			})
			b.Run("recent-runs/per-monitor", func(b *testing.B) {
				for b.Loop() {
					for _, id := range ids {
						runs, err := store.RunList(ctx, &monitors.HistoryListParams{ProjectID: p.ID, MonitorID: id, Limit: benchRuns})
						require.NoError(b, err)
						require.Len(b, runs, benchRuns)
					}
				}
			})

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
			b.Run("rows", func(b *testing.B) {
				for b.Loop() {
					req := httptest.NewRequest(http.MethodGet, "/", nil)
					req.Header.Set("HX-Request", "true")
					req.Header.Set("HX-Target", "monitor-rows")
					req.AddCookie(&http.Cookie{Name: "vigil_session", Value: token})
					rec := httptest.NewRecorder()
					e.ServeHTTP(rec, req)
					require.Equal(b, http.StatusOK, rec.Code)
				}
			})
		})
	}
}
