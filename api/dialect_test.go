package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/monitors"
)

// TestScheduleDialects creates, reads, updates and declares monitors whose
// cron expressions are read by robfig/cron and Quartz, and checks that a
// mistaken dialect is refused with the one to use.
func TestScheduleDialects(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		// A Quartz trigger: 02:30 on the second Sunday, Sunday = 1. New York
		// has no 02:30 on 8 March 2026 and Quartz skips it.
		b.clock.Set(time.Date(2026, 3, 1, 5, 0, 0, 0, time.UTC))
		m := b.createMonitor(map[string]any{"name": "quartz-job",
			"schedule": map[string]any{"kind": "cron", "expr": "0 30 2 ? * 1#2", "tz": "America/New_York", "dialect": "quartz"}})
		require.Equal(t, api.Schedule{Kind: "cron", Expr: "0 30 2 ? * 1#2", TZ: "America/New_York", Dialect: "quartz"}, m.Schedule)
		b.ping(m.PingKey, monitors.PingSuccess, b.clock.Now())
		got := b.getMonitor(m.ID)
		require.NotNil(t, got.NextExpectedAt)
		require.Equal(t, "2026-04-12T06:30:00Z", got.NextExpectedAt.UTC().Format(time.RFC3339))

		// The same text without a dialect would be read by cronie, with
		// 1 = Monday: refused, naming the dialect.
		r := b.do(http.MethodPost, "/api/v1/monitors", b.rw, map[string]any{"name": "pasted",
			"schedule": map[string]any{"kind": "cron", "expr": "0 30 2 ? * 1#2", "tz": "Europe/Berlin"}})
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Contains(t, string(r.body), "schedule.expr")
		require.Contains(t, string(r.body), `set schedule.dialect to \"quartz\"`)
		r = b.do(http.MethodPost, "/api/v1/monitors", b.rw, map[string]any{"name": "no-seconds",
			"schedule": map[string]any{"kind": "cron", "expr": "30 2 * * *", "dialect": "quartz"}})
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Contains(t, string(r.body), "it is valid in the cronie and robfig dialects")
		r = b.do(http.MethodPost, "/api/v1/monitors", b.rw, map[string]any{"name": "vixie",
			"schedule": map[string]any{"kind": "cron", "expr": "30 2 * * *", "dialect": "vixie"}})
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Contains(t, string(r.body), "schedule.dialect")

		// An update to robfig: the spring day has no 02:30 for robfig.
		b.clock.Set(time.Date(2026, 3, 7, 17, 0, 0, 0, time.UTC))
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{
			"schedule": map[string]any{"kind": "cron", "expr": "30 2 * * *", "tz": "America/New_York", "dialect": "robfig"}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		b.ping(m.PingKey, monitors.PingSuccess, b.clock.Now())
		got = b.getMonitor(m.ID)
		require.Equal(t, "robfig", got.Schedule.Dialect)
		require.Equal(t, "2026-03-09T06:30:00Z", got.NextExpectedAt.UTC().Format(time.RFC3339))

		// A declaration keeps the dialect; none is cronie.
		res := b.declareFromGoroutine(t, "k8s", []map[string]any{
			{"slug": "cronjob", "schedule": map[string]any{"kind": "cron", "expr": "30 2 * * *", "dialect": "robfig"}},
			{"slug": "crontab", "schedule": map[string]any{"kind": "cron", "expr": "30 2 * * *"}},
		})
		require.Len(t, res.Monitors, 2)
		require.Equal(t, "robfig", res.Monitors[0].Schedule.Dialect)
		require.Equal(t, "cronie", res.Monitors[1].Schedule.Dialect)
	})
}
