package server_test

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// TestRunRulesEndToEnd runs a whole server on each database with a clock
// the test sets, pings it over HTTP, and follows each run rule to the
// webhook it sends: a 2-second backup under min_runtime_seconds 60
// (too_fast, resolved by the next night's 30-minute run), a report
// started an hour before its 02:00 (early), and a loop run twice in 20
// minutes on an hourly interval (too_often).
func TestRunRulesEndToEnd(t *testing.T) {
	t.Parallel()
	eachDatabase(t, func(t *testing.T, dbURL string) {
		var now atomic.Pointer[time.Time]
		set := func(s string) {
			v, err := time.Parse(time.RFC3339, s)
			require.NoError(t, err)
			now.Store(&v)
		}
		set("2026-03-10T01:00:00Z")
		recv := notifiertest.NewReceiver(t, nil)
		cfg := testConfig(dbURL)
		cfg.NowFunc = func() time.Time { return *now.Load() }
		cfg.Delivery.AllowPrivate = true // the receiver is on loopback
		cfg.Evaluator.PollInterval = 20 * time.Millisecond
		// The clock jumps hours at a time: no outage of Vigil here.
		cfg.Evaluator.OutageThreshold = 30 * 24 * time.Hour
		srv, base := runServer(t, cfg)
		key := srv.Bootstrapped.APIKey
		require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/channels", key, map[string]any{
			"kind": "webhook", "name": "ops hook", "is_default": true,
			"config": map[string]any{"url": recv.URL + "/hook", "secret": "0123456789abcdef-secret"}}, nil))

		type monitor struct {
			ID      string
			PingKey string `json:"ping_key"`
		}
		create := func(fields map[string]any) monitor {
			t.Helper()
			var m monitor
			var apiErr map[string]any
			status := apiCall(t, http.MethodPost, base+"/api/v1/monitors", key, fields, &apiErr)
			require.Equal(t, http.StatusCreated, status, "%v", apiErr)
			raw, err := json.Marshal(apiErr)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &m))
			return m
		}
		ping := func(m monitor, at, suffix string) {
			t.Helper()
			set(at)
			status, body := pingStatus(t, base+"/ping/"+m.PingKey+suffix)
			require.Equal(t, http.StatusOK, status, body)
		}
		type hook struct {
			Event    string
			Incident struct {
				Kind    string
				Summary string
			}
			Monitor struct{ ID string }
		}
		// hooks waits for n webhook deliveries about m, and returns them.
		hooks := func(m monitor, n int) []hook {
			t.Helper()
			var got []hook
			require.Eventually(t, func() bool {
				got = nil
				for _, r := range recv.Requests() {
					var h hook
					require.NoError(t, json.Unmarshal(r.Body, &h))
					if h.Monitor.ID == m.ID {
						got = append(got, h)
					}
				}
				return len(got) >= n
			}, 20*time.Second, 20*time.Millisecond, "%d of %d webhooks", len(got), n)
			require.Len(t, got, n)
			return got
		}

		backup := create(map[string]any{"name": "nightly-backup", "schedule": map[string]any{"kind": "cron", "expr": "0 2 * * *"},
			"max_runtime_seconds": 3600, "min_runtime_seconds": 60})
		report := create(map[string]any{"name": "daily-report", "schedule": map[string]any{"kind": "cron", "expr": "0 2 * * *"},
			"early_seconds": 300})
		// control runs on night 1 only: it shows the evaluator judged night
		// 2's 02:00.
		control := create(map[string]any{"name": "control", "schedule": map[string]any{"kind": "cron", "expr": "0 2 * * *"}})
		loop := create(map[string]any{"name": "sync-loop", "schedule": map[string]any{"kind": "interval", "every_seconds": 3600},
			"too_often": "alert"})

		// Night 1: the backup "succeeds" in 2 seconds; the report runs on
		// time.
		ping(report, "2026-03-10T02:00:00Z", "")
		ping(control, "2026-03-10T02:00:00Z", "")
		ping(backup, "2026-03-10T02:00:00Z", "/start?rid=b1")
		ping(backup, "2026-03-10T02:00:02Z", "?rid=b1")
		h := hooks(backup, 1)[0]
		require.Equal(t, "incident.opened", h.Event)
		require.Equal(t, "too_fast", h.Incident.Kind)
		require.Equal(t, `nightly-backup: run "b1" succeeded at 2026-03-10 02:00:02 UTC after only 2s, less than its min runtime of 1m`, h.Incident.Summary)

		// A job that reports only its end, with the duration it measured
		// (as vigil run does), is judged by that duration.
		dump := create(map[string]any{"name": "db-dump", "schedule": map[string]any{"kind": "cron", "expr": "0 3 * * *"},
			"min_runtime_seconds": 60})
		ping(dump, "2026-03-10T03:00:00Z", "/0?duration_ms=1500")
		h = hooks(dump, 1)[0]
		require.Equal(t, "too_fast", h.Incident.Kind)
		require.Contains(t, h.Incident.Summary, "after only 1.5s")

		// The loop runs at 10:00 and again at 10:20.
		ping(loop, "2026-03-10T10:00:00Z", "/start")
		ping(loop, "2026-03-10T10:01:00Z", "")
		ping(loop, "2026-03-10T10:20:00Z", "/start")
		ping(loop, "2026-03-10T10:21:00Z", "")
		h = hooks(loop, 1)[0]
		require.Equal(t, "too_often", h.Incident.Kind)
		require.Contains(t, h.Incident.Summary, "20m after the one before")

		// Night 2: the report starts an hour early; the backup takes 30
		// minutes, which resolves its incident.
		ping(report, "2026-03-11T01:00:00Z", "/start")
		ping(report, "2026-03-11T01:02:00Z", "") // within its max runtime (the grace, 5m)
		h = hooks(report, 1)[0]
		require.Equal(t, "early", h.Incident.Kind)
		require.Contains(t, h.Incident.Summary, "1h before its occurrence of 2026-03-11 02:00 UTC")
		ping(backup, "2026-03-11T02:00:00Z", "/start?rid=b2")
		ping(backup, "2026-03-11T02:30:00Z", "?rid=b2")
		require.Equal(t, "incident.resolved", hooks(backup, 2)[1].Event)

		// The report's early run covered its 02:00: by 02:40 the evaluator
		// finds control missed (at 02:05), and the report not.
		set("2026-03-11T02:40:00Z")
		require.Equal(t, "missed", hooks(control, 1)[0].Incident.Kind)
		var incs struct {
			Incidents []struct{ Kind string }
		}
		require.Equal(t, http.StatusOK, apiCall(t, http.MethodGet, base+"/api/v1/monitors/"+report.ID+"/incidents", key, nil, &incs))
		require.Len(t, incs.Incidents, 1)
		require.Equal(t, "early", incs.Incidents[0].Kind)
	})
}
