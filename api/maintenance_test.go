package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
)

func TestMaintenanceWindowsAPI(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		db := b.createMonitor(map[string]any{"name": "db-backup", "tags": []string{"db"}})
		web := b.createMonitor(map[string]any{"name": "web"})
		require.False(t, db.InMaintenance)

		// Bad input: 400 naming the field, nothing stored.
		for _, tc := range []struct {
			field string
			body  map[string]any
		}{
			{"name", map[string]any{"tags": []string{"db"}, "starts_at": t0, "ends_at": t0.Add(time.Hour)}},
			{"monitors", map[string]any{"name": "x", "starts_at": t0, "ends_at": t0.Add(time.Hour)}},
			{"monitors[0]", map[string]any{"name": "x", "monitors": []string{"nope"}, "starts_at": t0, "ends_at": t0.Add(time.Hour)}},
			{"ends_at", map[string]any{"name": "x", "all": true, "starts_at": t0, "ends_at": t0.Add(-time.Hour)}},
			{"schedule", map[string]any{"name": "x", "all": true, "schedule": "every sunday", "duration_seconds": 60}},
			{"tz", map[string]any{"name": "x", "all": true, "schedule": "0 2 * * 0", "tz": "Mars/Olympus", "duration_seconds": 60}},
			{"duration_seconds", map[string]any{"name": "x", "all": true, "schedule": "0 2 * * 0"}},
		} {
			r := b.do(http.MethodPost, "/api/v1/maintenance-windows", b.rw, tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", tc.field, r.body)
			require.Equal(t, tc.field, r.errorBody(t).Field, "%s", r.body)
		}
		var list api.MaintenanceWindowList
		r := b.do(http.MethodGet, "/api/v1/maintenance-windows", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		r.json(t, &list)
		require.Empty(t, list.MaintenanceWindows, "nothing stored")

		// A window over the db tag, now until in two hours.
		r = b.do(http.MethodPost, "/api/v1/maintenance-windows", b.rw, map[string]any{
			"name": "db upgrade", "tags": []string{"db"}, "starts_at": t0, "ends_at": t0.Add(2 * time.Hour)})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var w api.MaintenanceWindow
		r.json(t, &w)
		require.True(t, w.Active)
		require.Equal(t, t0.Add(2*time.Hour), *w.ActiveUntil)
		got := b.getMonitor(db.ID)
		require.True(t, got.InMaintenance)
		require.Equal(t, t0.Add(2*time.Hour), *got.InMaintenanceUntil)
		require.False(t, b.getMonitor(web.ID).InMaintenance)
		require.Equal(t, http.StatusForbidden, b.do(http.MethodPost, "/api/v1/maintenance-windows", b.ro, map[string]any{
			"name": "ro", "all": true, "starts_at": t0, "ends_at": t0.Add(time.Hour)}).status)
		require.Equal(t, http.StatusNotFound, b.do(http.MethodGet, "/api/v1/maintenance-windows/"+w.ID, b.otherRW, nil).status)

		// PATCH: bad input changes nothing.
		r = b.do(http.MethodPatch, "/api/v1/maintenance-windows/"+w.ID, b.rw, map[string]any{"ends_at": t0.Add(-time.Hour)})
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		require.Equal(t, "ends_at", r.errorBody(t).Field)
		r = b.do(http.MethodPatch, "/api/v1/maintenance-windows/"+w.ID, b.rw, map[string]any{"monitors": []string{web.ID}, "tags": []string{}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.True(t, b.getMonitor(web.ID).InMaintenance)
		require.False(t, b.getMonitor(db.ID).InMaintenance)

		// End now.
		b.clock.Set(t0.Add(30 * time.Minute))
		r = b.do(http.MethodPost, "/api/v1/maintenance-windows/"+w.ID+"/end", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &w)
		require.False(t, w.Active)
		require.Equal(t, t0.Add(30*time.Minute), *w.EndedAt)
		require.False(t, b.getMonitor(web.ID).InMaintenance)

		// A recurring one.
		r = b.do(http.MethodPost, "/api/v1/maintenance-windows", b.rw, map[string]any{
			"name": "sunday", "all": true, "schedule": "0 2 * * 0", "tz": "Europe/Berlin", "duration_seconds": 7200})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var rw api.MaintenanceWindow
		r.json(t, &rw)
		require.Equal(t, time.Date(2026, 3, 8, 1, 0, 0, 0, time.UTC), *rw.NextStartsAt, "Sunday 02:00 CET")

		require.Equal(t, http.StatusNoContent, b.do(http.MethodDelete, "/api/v1/maintenance-windows/"+w.ID, b.rw, nil).status)
		require.Equal(t, http.StatusNotFound, b.do(http.MethodDelete, "/api/v1/maintenance-windows/"+w.ID, b.rw, nil).status)
		r = b.do(http.MethodGet, "/api/v1/maintenance-windows", b.rw, nil)
		r.json(t, &list)
		require.Len(t, list.MaintenanceWindows, 1)
	})
}
