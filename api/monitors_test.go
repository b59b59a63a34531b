package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/monitors"
)

func TestMonitorLifecycle(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		ch := b.channel("ops")
		m := b.createMonitor(map[string]any{
			"name": "Nightly import", "tags": []string{"etl", "nightly"},
			"schedule":      map[string]any{"kind": "cron", "expr": "0 2 * * *", "tz": "Europe/Berlin"},
			"grace_seconds": 600, "max_runtime_seconds": 3600, "deadline_seconds": 10800,
			"alert_on_failure": "every_attempt", "failure_threshold": 2, "recovery_threshold": 3,
			"overlap": "ignore", "channels": []string{ch.ID},
		})
		require.Equal(t, "nightly-import", m.Slug, "made from the name")
		require.Equal(t, api.Schedule{Kind: "cron", Expr: "0 2 * * *", TZ: "Europe/Berlin", Dialect: "cronie"}, m.Schedule, "cronie unless told")
		require.EqualValues(t, 600, m.GraceSeconds)
		require.EqualValues(t, 3600, m.MaxRuntimeSeconds)
		require.EqualValues(t, 10800, m.DeadlineSeconds)
		require.Equal(t, "every_attempt", m.AlertOnFailure)
		require.Equal(t, 2, m.FailureThreshold)
		require.Equal(t, 3, m.RecoveryThreshold)
		require.Equal(t, "ignore", m.Overlap)
		require.Equal(t, []string{ch.ID}, m.Channels)
		require.Equal(t, "new", m.Status)
		require.Nil(t, m.LastPingAt)
		require.Nil(t, m.NextExpectedAt, "nothing is expected before the first ping")
		require.Empty(t, m.Source)
		require.False(t, m.Discovered)
		require.Equal(t, "https://vigil.example.com/ping/"+m.PingKey, m.PingURL)
		require.Equal(t, api.PingURLs{
			ByKey:  m.PingURL,
			BySlug: "https://vigil.example.com/ping/" + b.prj.PingKey + "/nightly-import",
			Start:  m.PingURL + "/start", Fail: m.PingURL + "/fail", Log: m.PingURL + "/log",
			Skip: m.PingURL + "/skip", Cancel: m.PingURL + "/cancel",
		}, m.PingURLs)
		require.Equal(t, t0, m.CreatedAt)
		require.Equal(t, t0, m.UpdatedAt)
		require.Empty(t, m.PersonFields, "a person's create sets no person fields")

		// A success at 02:00:30 Berlin time: the next run is expected at
		// 02:00 the next day, and the status follows the clock.
		at := time.Date(2026, 3, 3, 1, 0, 30, 0, time.UTC)
		b.ping(m.PingKey, monitors.PingSuccess, at)
		b.clock.Set(at.Add(time.Minute))
		got := b.getMonitor(m.ID)
		require.Equal(t, "up", got.Status)
		require.Equal(t, at, *got.LastPingAt)
		stored, err := b.store.MonitorGet(ctx, b.prj.ID, m.ID)
		require.NoError(t, err)
		require.Equal(t, stored.State.Expected, *got.NextExpectedAt, "next_expected_at is the state's expected time")
		require.Equal(t, time.Date(2026, 3, 4, 1, 0, 0, 0, time.UTC), *got.NextExpectedAt)
		b.clock.Set(got.NextExpectedAt.Add(time.Minute))
		require.Equal(t, "late", b.getMonitor(m.ID).Status, "status is the status at now")

		// PATCH reconfigures the state: a new schedule moves the expected time.
		b.clock.Set(at.Add(50 * time.Minute))
		r := b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{
			"schedule": map[string]any{"kind": "interval", "every_seconds": 3600}, "grace_seconds": 120})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var patched api.Monitor
		r.json(t, &patched)
		require.Equal(t, api.Schedule{Kind: "interval", EverySeconds: 3600}, patched.Schedule)
		require.EqualValues(t, 120, patched.GraceSeconds)
		require.Equal(t, at.Add(50*time.Minute), patched.UpdatedAt)
		require.Equal(t, []string{"schedule", "grace_seconds"}, patched.PersonFields)
		require.Equal(t, at.Add(time.Hour), *patched.NextExpectedAt, "the new interval, from the last ping")
		require.Equal(t, "up", patched.Status)

		// The same PATCH again changes nothing, updated_at included.
		b.clock.Set(at.Add(2 * time.Hour))
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"grace_seconds": 120})
		require.Equal(t, http.StatusOK, r.status)
		var again api.Monitor
		r.json(t, &again)
		require.Equal(t, at.Add(50*time.Minute), again.UpdatedAt)

		// Renaming keeps the slug, and a slug may change for a person's monitor.
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"name": "Import", "slug": "import",
			"retry_policy": map[string]any{"name": "three", "max_retries": 3, "max_delays_seconds": []int{60, 120, 240}}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &again)
		require.Equal(t, "import", again.Slug)
		require.Equal(t, &api.RetryPolicy{Name: "three", MaxRetries: 3, MaxDelaysSeconds: []int64{60, 120, 240}}, again.RetryPolicy)
		require.EqualValues(t, 420, *again.RetryChainSeconds)
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"retry_policy": nil})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &again)
		require.Nil(t, again.RetryPolicy, "null removes the retry policy")
		require.Nil(t, again.RetryChainSeconds)

		// Pause and resume.
		r = b.do(http.MethodPost, "/api/v1/monitors/"+m.ID+"/pause", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		r.json(t, &again)
		require.True(t, again.Paused)
		require.Equal(t, "paused", again.Status)
		require.Nil(t, again.NextExpectedAt)
		require.Contains(t, again.PersonFields, "paused")
		r = b.do(http.MethodPost, "/api/v1/monitors/"+m.ID+"/resume", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		r.json(t, &again)
		require.False(t, again.Paused)
		require.Equal(t, "new", again.Status, "a resumed monitor starts afresh")
		require.NotContains(t, again.PersonFields, "paused")
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"paused": true})
		require.Equal(t, http.StatusOK, r.status)
		r.json(t, &again)
		require.True(t, again.Paused, "paused in a PATCH pauses")

		// Delete.
		r = b.do(http.MethodDelete, "/api/v1/monitors/"+m.ID, b.rw, nil)
		require.Equal(t, http.StatusNoContent, r.status)
		require.Empty(t, r.body)
		r = b.do(http.MethodGet, "/api/v1/monitors/"+m.ID, b.rw, nil)
		require.Equal(t, http.StatusNotFound, r.status)
		require.Equal(t, fmt.Sprintf("monitor %q not found", m.ID), r.errorBody(t).Error)
	})
}

func TestMonitorDownAndIncidents(t *testing.T) {
	t.Parallel()
	deliveries := deliveryList{}
	eachStoreWith(t, options{deliveries: deliveries}, func(t *testing.T, b *bundle) {
		m := b.createMonitor(map[string]any{"name": "job"})
		b.ping(m.PingKey, monitors.PingFail, t0)
		got := b.getMonitor(m.ID)
		require.Equal(t, "down", got.Status)
		require.Equal(t, []api.OpenIncident{{Kind: "failed", OpenedAt: t0, State: "open"}}, got.OpenIncidents)

		r := b.do(http.MethodGet, "/api/v1/monitors/"+m.ID+"/incidents", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		var l api.IncidentList
		r.json(t, &l)
		require.Len(t, l.Incidents, 1)
		in := l.Incidents[0]
		require.Equal(t, "failed", in.Kind)
		require.Equal(t, t0, in.OpenedAt)
		require.Nil(t, in.ResolvedAt)
		require.Equal(t, api.IncidentMonitor{ID: m.ID, Name: "job", Slug: "job"}, in.Monitor)
		require.Len(t, in.Events, 1)
		require.Equal(t, "incident.opened", in.Events[0].Kind)
		require.Equal(t, deliveries.of(in.ID), in.Deliveries, "deliveries come from the delivery part")

		b.ping(m.PingKey, monitors.PingSuccess, t0.Add(time.Minute))
		r = b.do(http.MethodGet, "/api/v1/incidents/"+in.ID, b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		var one api.Incident
		r.json(t, &one)
		require.Equal(t, t0.Add(time.Minute), *one.ResolvedAt)
		require.Equal(t, []string{"incident.opened", "incident.resolved"}, []string{one.Events[0].Kind, one.Events[1].Kind})

		// The project's incidents: open ones, and recent ones, newest first.
		other := b.createMonitor(map[string]any{"name": "other"})
		b.ping(other.PingKey, monitors.PingFail, t0.Add(2*time.Minute))
		r = b.do(http.MethodGet, "/api/v1/incidents", b.rw, nil)
		r.json(t, &l)
		require.Len(t, l.Incidents, 2)
		require.Equal(t, "other", l.Incidents[0].Monitor.Slug, "newest first")
		r = b.do(http.MethodGet, "/api/v1/incidents?open=true", b.rw, nil)
		r.json(t, &l)
		require.Len(t, l.Incidents, 1)
		require.Equal(t, "other", l.Incidents[0].Monitor.Slug)
		r = b.do(http.MethodGet, "/api/v1/incidents?monitor="+m.ID, b.rw, nil)
		r.json(t, &l)
		require.Len(t, l.Incidents, 1)
		require.Equal(t, in.ID, l.Incidents[0].ID)
		r = b.do(http.MethodGet, "/api/v1/incidents?since="+url.QueryEscape(t0.Add(90*time.Second).Format(time.RFC3339)), b.rw, nil)
		r.json(t, &l)
		require.Len(t, l.Incidents, 1, "the resolved one ended before since")
		r = b.do(http.MethodGet, "/api/v1/incidents?limit=1", b.rw, nil)
		r.json(t, &l)
		require.Len(t, l.Incidents, 1)
		require.NotNil(t, l.Next)
		r = b.do(http.MethodGet, *l.Next, b.rw, nil)
		r.json(t, &l)
		require.Len(t, l.Incidents, 1)
		require.Equal(t, in.ID, l.Incidents[0].ID)
		require.Nil(t, l.Next)
	})
}

// deliveryList is a DeliveryLister with one made-up attempt per incident.
type deliveryList struct{}

func (deliveryList) of(id string) []api.Delivery {
	return []api.Delivery{{ID: "d-" + id, ChannelID: "ch", Event: "incident.opened", Attempt: 1, At: t0,
		Outcome: "sent", StatusCode: 200}}
}

func (d deliveryList) IncidentDeliveries(_ context.Context, _ string, ids []string) (map[string][]monitors.DeliveryEntry, error) {
	out := map[string][]monitors.DeliveryEntry{}
	for _, id := range ids {
		for _, a := range d.of(id) {
			out[id] = append(out[id], monitors.DeliveryEntry(a))
		}
	}
	return out, nil
}

func TestMonitorListPagesAndFilters(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		var (
			ids []string
			all []api.Monitor
		)
		for i := range 7 {
			tags := []string{"even"}
			if i%2 == 1 {
				tags = []string{"odd"}
			}
			m := b.createMonitor(map[string]any{"name": fmt.Sprintf("job-%d", i), "tags": tags,
				"schedule": map[string]any{"kind": "interval", "every_seconds": 3600}})
			ids = append(ids, m.ID)
			all = append(all, m)
		}
		// Walk the pages by their next links.
		var seen []string
		next := "/api/v1/monitors?limit=3"
		pages := 0
		for next != "" {
			r := b.do(http.MethodGet, next, b.rw, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			var l api.MonitorList
			r.json(t, &l)
			for _, m := range l.Monitors {
				seen = append(seen, m.ID)
			}
			pages++
			next = ""
			if l.Next != nil {
				next = *l.Next
			}
		}
		require.Equal(t, 3, pages)
		require.Equal(t, ids, seen, "by name, each once")

		names := func(path string) []string {
			r := b.do(http.MethodGet, path, b.rw, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			var l api.MonitorList
			r.json(t, &l)
			out := []string{}
			for _, m := range l.Monitors {
				out = append(out, m.Name)
			}
			return out
		}
		require.Equal(t, []string{"job-1", "job-3", "job-5"}, names("/api/v1/monitors?tag=odd"))

		// Statuses: job-0 up, job-1 late, job-2 down, job-3 paused, the rest new.
		b.clock.Set(t0.Add(90 * time.Minute))
		b.ping(all[0].PingKey, monitors.PingSuccess, t0.Add(80*time.Minute))
		b.ping(all[1].PingKey, monitors.PingSuccess, t0)
		b.ping(all[2].PingKey, monitors.PingFail, t0)
		r := b.do(http.MethodPost, "/api/v1/monitors/"+all[3].ID+"/pause", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, []string{"job-0"}, names("/api/v1/monitors?status=up"))
		require.Equal(t, []string{"job-1"}, names("/api/v1/monitors?status=late"))
		require.Equal(t, []string{"job-1", "job-2"}, names("/api/v1/monitors?status=late,down"))
		require.Equal(t, []string{"job-2", "job-3"}, names("/api/v1/monitors?status=down&status=paused"), "repeated or comma-separated")
		require.Equal(t, []string{"job-4", "job-6"}, names("/api/v1/monitors?status=new&tag=even"))
		require.Equal(t, []string{"job-5"}, names("/api/v1/monitors?status=new&tag=odd&limit=1&offset=0"))
	})
}

// TestNotifyOutput: notify_output is on unless a person or a source turns
// it off, and is stored as sent.
func TestNotifyOutput(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		on := b.createMonitor(map[string]any{"name": "with output"})
		require.True(t, on.NotifyOutput, "on by default")
		off := b.createMonitor(map[string]any{"name": "secret output", "notify_output": false})
		require.False(t, off.NotifyOutput)
		require.False(t, b.getMonitor(off.ID).NotifyOutput, "stored")

		r := b.do(http.MethodPatch, "/api/v1/monitors/"+off.ID, b.rw, map[string]any{"notify_output": true})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		got := b.getMonitor(off.ID)
		require.True(t, got.NotifyOutput)
		require.Contains(t, got.PersonFields, "notify_output")

		res := b.declare("app", map[string]any{"slug": "quiet", "notify_output": false}, map[string]any{"slug": "loud"})
		byS := bySlug(res.Monitors)
		require.False(t, byS["quiet"].NotifyOutput)
		require.True(t, byS["loud"].NotifyOutput)
	})
}

// TestRunRuleFields: min_runtime_seconds, early_seconds and too_often are
// off by default, stored as sent, set by PATCH and by declarations.
func TestRunRuleFields(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		plain := b.createMonitor(map[string]any{"name": "plain"})
		require.Zero(t, plain.MinRuntimeSeconds)
		require.Zero(t, plain.EarlySeconds)
		require.Equal(t, "ignore", plain.TooOften, "off by default")

		backup := b.createMonitor(map[string]any{"name": "backup", "schedule": map[string]any{"kind": "cron", "expr": "0 2 * * *"},
			"max_runtime_seconds": 7200, "min_runtime_seconds": 60, "early_seconds": 300, "too_often": "alert"})
		got := b.getMonitor(backup.ID)
		require.Equal(t, int64(60), got.MinRuntimeSeconds)
		require.Equal(t, int64(300), got.EarlySeconds)
		require.Equal(t, "alert", got.TooOften)

		r := b.do(http.MethodPatch, "/api/v1/monitors/"+backup.ID, b.rw, map[string]any{"min_runtime_seconds": 0, "too_often": "ignore"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		got = b.getMonitor(backup.ID)
		require.Zero(t, got.MinRuntimeSeconds)
		require.Equal(t, "ignore", got.TooOften)
		require.Equal(t, int64(300), got.EarlySeconds, "left alone")
		require.Subset(t, got.PersonFields, []string{"min_runtime_seconds", "too_often"})

		// Changing the schedule to an interval while early_seconds is set
		// is refused, naming it; nothing is stored.
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+backup.ID, b.rw, map[string]any{"schedule": map[string]any{"kind": "interval", "every_seconds": 3600}})
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		require.Contains(t, string(r.body), "early_seconds")
		require.Equal(t, "cron", b.getMonitor(backup.ID).Schedule.Kind)

		res := b.declare("app", map[string]any{"slug": "dump", "max_runtime_seconds": 3600, "min_runtime_seconds": 30, "too_often": "alert"},
			map[string]any{"slug": "other"})
		byS := bySlug(res.Monitors)
		require.Equal(t, int64(30), byS["dump"].MinRuntimeSeconds)
		require.Equal(t, "alert", byS["dump"].TooOften)
		require.Equal(t, "ignore", byS["other"].TooOften)
	})
}
