package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/monitors"
)

// TestOnCalendarSchedules creates, updates and declares monitors with
// systemd calendar schedules, on both stores, and reads back the schedule
// and the next expected time, which follow systemd's daylight-saving rules.
func TestOnCalendarSchedules(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		m := b.createMonitor(map[string]any{"name": "backup",
			"schedule": map[string]any{"kind": "oncalendar", "expr": "Mon..Fri 02:30", "tz": "Europe/Berlin"}})
		require.Equal(t, api.Schedule{Kind: "oncalendar", Expr: "Mon..Fri 02:30", TZ: "Europe/Berlin"}, m.Schedule)

		// A ping on Friday 2026-03-27 at 02:30 CET: the next run is on
		// Monday at 02:30, which is CEST by then.
		b.clock.Set(time.Date(2026, 3, 27, 1, 30, 5, 0, time.UTC))
		b.ping(m.PingKey, monitors.PingSuccess, b.clock.Now())
		got := b.getMonitor(m.ID)
		require.NotNil(t, got.NextExpectedAt)
		require.Equal(t, time.Date(2026, 3, 30, 0, 30, 0, 0, time.UTC), got.NextExpectedAt.UTC())

		r := b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw,
			map[string]any{"schedule": map[string]any{"kind": "oncalendar", "expr": "*-*~01 02:30 UTC"}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var patched api.Monitor
		r.json(t, &patched)
		require.Equal(t, api.Schedule{Kind: "oncalendar", Expr: "*-*~01 02:30 UTC", TZ: "UTC"}, patched.Schedule)

		d := b.do(http.MethodPut, "/api/v1/sources/timers/monitors", b.rw, map[string]any{"monitors": []map[string]any{
			{"slug": "rotate", "schedule": map[string]any{"kind": "oncalendar", "expr": "daily", "tz": "Australia/Lord_Howe"}}}})
		require.Equal(t, http.StatusOK, d.status, "%s", d.body)
		var dres api.DeclarationResult
		d.json(t, &dres)
		declared := b.getMonitor(dres.Monitors[0].ID)
		require.Equal(t, api.Schedule{Kind: "oncalendar", Expr: "daily", TZ: "Australia/Lord_Howe"}, declared.Schedule)

		doc := b.do(http.MethodGet, "/api/v1/openapi.json", "", nil)
		require.Equal(t, http.StatusOK, doc.status)
		require.Contains(t, string(doc.body), `"oncalendar"`, "the OpenAPI document lists the schedule kind")
	})
}
