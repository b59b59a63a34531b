package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/monitors"
)

func TestSnoozeAPI(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		m := b.createMonitor(map[string]any{"name": "backup"})
		require.Nil(t, m.SnoozedUntil)
		path := "/api/v1/monitors/" + m.ID + "/snooze"

		// Bad input: 400 naming the field, nothing stored.
		for _, tc := range []struct {
			field, want string
			body        any
		}{
			{"seconds", "seconds: give seconds (how long) or until (an RFC 3339 time)", map[string]any{}},
			{"seconds", "seconds: give seconds or until, not both", map[string]any{"seconds": 60, "until": t0.Add(time.Hour)}},
			{"seconds", "seconds: must be between 1 and 604800 (7d)", map[string]any{"seconds": 0}},
			{"seconds", "seconds: must be between 1 and 604800 (7d)", map[string]any{"seconds": 604801}},
			{"until", "until: must be in the future", map[string]any{"until": t0.Add(-time.Minute)}},
			{"until", "until: a snooze lasts at most 7d", map[string]any{"until": t0.Add(8 * 24 * time.Hour)}},
			{"until", "until: must be an RFC 3339 time, such as 2026-03-02T15:04:05Z", map[string]any{"until": "tomorrow"}},
			{"snoozed_until", "", map[string]any{"snoozed_until": t0.Add(time.Hour)}},
		} {
			r := b.do(http.MethodPost, path, b.rw, tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", tc.body, r.body)
			e := r.errorBody(t)
			require.Equal(t, tc.field, e.Field, "%s", r.body)
			if tc.want != "" {
				require.Equal(t, tc.want, e.Error)
			}
		}
		require.Nil(t, b.getMonitor(m.ID).SnoozedUntil, "nothing stored")
		require.Equal(t, http.StatusForbidden, b.do(http.MethodPost, path, b.ro, map[string]any{"seconds": 60}).status)
		require.Equal(t, http.StatusNotFound, b.do(http.MethodPost, path, b.otherRW, map[string]any{"seconds": 60}).status)
		r := b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"snoozed_until": t0.Add(time.Hour)})
		require.Equal(t, http.StatusBadRequest, r.status, "snoozed_until is set by .../snooze only: %s", r.body)

		r = b.do(http.MethodPost, path, b.rw, map[string]any{"seconds": 3600})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var got api.Monitor
		r.json(t, &got)
		require.Equal(t, t0.Add(time.Hour), *got.SnoozedUntil)
		r = b.do(http.MethodPost, path, b.rw, map[string]any{"until": t0.Add(2 * time.Hour).Format(time.RFC3339)})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &got)
		require.Equal(t, t0.Add(2*time.Hour), *got.SnoozedUntil, "a snooze replaces the one in force")

		// A failure while snoozed: the incident is shown, held.
		b.ping(m.PingKey, monitors.PingFail, t0.Add(time.Minute))
		got = b.getMonitor(m.ID)
		require.Equal(t, []api.OpenIncident{{Kind: "failed", OpenedAt: t0.Add(time.Minute), State: "open", Held: true}}, got.OpenIncidents)
		var list api.IncidentList
		r = b.do(http.MethodGet, "/api/v1/monitors/"+m.ID+"/incidents", b.rw, nil)
		r.json(t, &list)
		require.Len(t, list.Incidents, 1)
		require.True(t, list.Incidents[0].Held)
		require.Equal(t, "open", list.Incidents[0].State)
		require.Nil(t, list.Incidents[0].SuppressedBy)

		r = b.do(http.MethodDelete, path, b.rw, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &got)
		require.Nil(t, got.SnoozedUntil)
		require.False(t, got.OpenIncidents[0].Held, "notified when the snooze ended")
		r = b.do(http.MethodDelete, path, b.rw, nil)
		require.Equal(t, http.StatusOK, r.status, "ending no snooze is no error")

		// A snooze in the past is not shown.
		r = b.do(http.MethodPost, path, b.rw, map[string]any{"seconds": 60})
		require.Equal(t, http.StatusOK, r.status)
		b.clock.Set(t0.Add(2 * time.Minute))
		require.Nil(t, b.getMonitor(m.ID).SnoozedUntil)
	})
}

func TestDependsOnAPI(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		db := b.createMonitor(map[string]any{"name": "db"})
		backup := b.createMonitor(map[string]any{"name": "backup", "depends_on": []string{db.ID}})
		require.Equal(t, []string{db.ID}, backup.DependsOn)
		require.Equal(t, []string{}, db.DependsOn)
		report := b.createMonitor(map[string]any{"name": "report", "depends_on": []string{"backup"}})
		require.Equal(t, []string{backup.ID}, report.DependsOn, "a slug is stored as its monitor's ID")
		r := b.do(http.MethodPost, "/api/v1/monitors", b.otherRW, map[string]any{"name": "elsewhere"})
		require.Equal(t, http.StatusCreated, r.status)
		var other api.Monitor
		r.json(t, &other)

		for _, tc := range []struct {
			method, path string
			body         map[string]any
			want         string
		}{
			{http.MethodPatch, "/api/v1/monitors/" + db.ID, map[string]any{"depends_on": []string{report.ID}},
				"depends_on: cycle db → report → backup → db"},
			{http.MethodPatch, "/api/v1/monitors/" + db.ID, map[string]any{"depends_on": []string{backup.ID}},
				"depends_on: cycle db → backup → db"},
			{http.MethodPatch, "/api/v1/monitors/" + db.ID, map[string]any{"depends_on": []string{db.ID}},
				"depends_on: a monitor cannot depend on itself"},
			{http.MethodPatch, "/api/v1/monitors/" + db.ID, map[string]any{"depends_on": []string{other.ID}},
				`depends_on: no monitor "` + other.ID + `" in this project`},
			{http.MethodPost, "/api/v1/monitors", map[string]any{"name": "x", "depends_on": []string{"nope"}},
				`depends_on: no monitor "nope" in this project`},
			{http.MethodPost, "/api/v1/monitors", map[string]any{"name": "x", "depends_on": []string{db.ID, db.ID}},
				""},
		} {
			r := b.do(tc.method, tc.path, b.rw, tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", tc.body, r.body)
			e := r.errorBody(t)
			require.Contains(t, e.Field, "depends_on", "%s", r.body)
			if tc.want != "" {
				require.Equal(t, tc.want, e.Error)
			}
		}
		require.Equal(t, []string{}, b.getMonitor(db.ID).DependsOn, "nothing stored")

		// A declaration names dependencies by slug, its own monitors too.
		r = b.do(http.MethodPut, "/api/v1/sources/app/monitors", b.rw, map[string]any{"monitors": []map[string]any{
			{"slug": "extract", "depends_on": []string{"db"}},
			{"slug": "load", "depends_on": []string{"extract"}},
		}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var d api.DeclarationResult
		r.json(t, &d)
		require.Equal(t, []string{db.ID}, d.Monitors[0].DependsOn)
		require.Equal(t, []string{d.Monitors[0].ID}, d.Monitors[1].DependsOn)
		updated := d.Monitors[1].UpdatedAt
		b.clock.Set(t0.Add(time.Minute))
		r = b.do(http.MethodPut, "/api/v1/sources/app/monitors", b.rw, map[string]any{"monitors": []map[string]any{
			{"slug": "extract", "depends_on": []string{"db"}},
			{"slug": "load", "depends_on": []string{"extract"}},
		}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &d)
		require.Equal(t, updated, d.Monitors[1].UpdatedAt, "the same declaration again changes nothing")
		r = b.do(http.MethodPut, "/api/v1/sources/app/monitors", b.rw, map[string]any{"monitors": []map[string]any{
			{"slug": "extract", "depends_on": []string{"load"}},
			{"slug": "load", "depends_on": []string{"extract"}},
		}})
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		require.Equal(t, "depends_on: cycle extract → load → extract", r.errorBody(t).Error)

		// A parent down: the child's failure opens suppressed under it.
		b.ping(db.PingKey, monitors.PingFail, t0.Add(2*time.Minute))
		b.ping(backup.PingKey, monitors.PingFail, t0.Add(2*time.Minute))
		got := b.getMonitor(backup.ID)
		require.Equal(t, "suppressed", got.OpenIncidents[0].State)
		var list api.IncidentList
		r = b.do(http.MethodGet, "/api/v1/incidents?open=true", b.rw, nil)
		r.json(t, &list)
		require.Len(t, list.Incidents, 2)
		byMonitor := map[string]api.Incident{}
		for _, in := range list.Incidents {
			byMonitor[in.Monitor.ID] = in
		}
		require.Equal(t, "open", byMonitor[db.ID].State)
		require.Equal(t, "suppressed", byMonitor[backup.ID].State)
		require.Equal(t, byMonitor[db.ID].ID, *byMonitor[backup.ID].SuppressedBy)

		// Removing the dependency ends the suppression now.
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+backup.ID, b.rw, map[string]any{"depends_on": []string{}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &got)
		require.Equal(t, "open", got.OpenIncidents[0].State)
		require.False(t, got.OpenIncidents[0].Held)
	})
}
