package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/sdk/retry"
)

func (b *bundle) declare(source string, specs ...map[string]any) api.DeclarationResult {
	b.t.Helper()
	return b.declareQuery(source, "", specs...)
}

// declareQuery declares with a query string, such as
// "allow_mass_undeclare=true".
func (b *bundle) declareQuery(source, query string, specs ...map[string]any) api.DeclarationResult {
	b.t.Helper()
	if specs == nil {
		specs = []map[string]any{}
	}
	path := "/api/v1/sources/" + source + "/monitors"
	if query != "" {
		path += "?" + query
	}
	r := b.do(http.MethodPut, path, b.rw, map[string]any{"monitors": specs})
	require.Equal(b.t, http.StatusOK, r.status, "%s", r.body)
	var res api.DeclarationResult
	r.json(b.t, &res)
	return res
}

func bySlug(ms []api.Monitor) map[string]api.Monitor {
	out := map[string]api.Monitor{}
	for _, m := range ms {
		out[m.Slug] = m
	}
	return out
}

func TestDeclareCreatesUpdatesUndeclares(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		invoices := map[string]any{"slug": "invoices", "name": "Invoices", "tags": []string{"billing"},
			"schedule": map[string]any{"kind": "cron", "expr": "0 * * * *"}, "grace_seconds": 600}
		reports := map[string]any{"slug": "reports", "schedule": map[string]any{"kind": "interval", "every_seconds": 86400}}
		res := b.declare("billing", invoices, reports)
		require.Len(t, res.Monitors, 2)
		require.Empty(t, res.Undeclared)
		inv, rep := res.Monitors[0], res.Monitors[1]
		require.Equal(t, "invoices", inv.Slug, "in the order declared")
		require.Equal(t, "Invoices", inv.Name)
		require.Equal(t, "reports", rep.Name, "the name defaults to the slug")
		require.Equal(t, api.Schedule{Kind: "cron", Expr: "0 * * * *", TZ: "UTC", Dialect: "cronie"}, inv.Schedule)
		require.EqualValues(t, 600, inv.GraceSeconds)
		require.EqualValues(t, 300, rep.GraceSeconds, "a field left out takes its default")
		for _, m := range res.Monitors {
			require.Equal(t, "billing", m.Source)
			require.True(t, m.Discovered)
			require.False(t, m.Paused)
			require.Equal(t, "new", m.Status)
			require.NotEmpty(t, m.ID)
			require.Equal(t, "https://vigil.example.com/ping/"+m.PingKey, m.PingURL)
			require.Equal(t, t0, m.UpdatedAt)
		}
		b.ping(rep.PingKey, monitors.PingSuccess, t0.Add(time.Minute))

		// The same declaration again changes nothing: same monitors, rows
		// untouched, updated_at where it was.
		before, err := b.store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID})
		require.NoError(t, err)
		b.clock.Set(t0.Add(time.Hour))
		again := b.declare("billing", invoices, reports)
		require.Equal(t, inv.ID, again.Monitors[0].ID)
		require.Equal(t, rep.ID, again.Monitors[1].ID)
		require.Equal(t, t0, again.Monitors[0].UpdatedAt)
		after, err := b.store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID})
		require.NoError(t, err)
		require.Equal(t, before, after, "idempotent")

		// A changed setting is updated; the unchanged monitor is not.
		invoices["grace_seconds"] = 900
		b.clock.Set(t0.Add(2 * time.Hour))
		res = b.declare("billing", invoices, reports)
		require.EqualValues(t, 900, res.Monitors[0].GraceSeconds)
		require.Equal(t, t0.Add(2*time.Hour), res.Monitors[0].UpdatedAt)
		require.Equal(t, t0, res.Monitors[1].UpdatedAt)

		// reports is no longer declared: undeclared, not paused, history kept.
		b.clock.Set(t0.Add(3 * time.Hour))
		res = b.declare("billing", invoices)
		require.Len(t, res.Monitors, 1)
		require.Len(t, res.Undeclared, 1)
		gone := res.Undeclared[0]
		require.Equal(t, rep.ID, gone.ID)
		require.False(t, gone.Discovered)
		require.False(t, gone.Paused, "no person paused it")
		require.Equal(t, "undeclared", gone.Status)
		require.NotContains(t, gone.PersonFields, "paused")
		r := b.do(http.MethodGet, "/api/v1/monitors/"+rep.ID+"/pings", b.rw, nil)
		var pl api.PingList
		r.json(t, &pl)
		require.Len(t, pl.Pings, 1, "history kept")
		// Declaring the set again leaves it as it is.
		res = b.declare("billing", invoices)
		require.Equal(t, t0.Add(3*time.Hour), res.Undeclared[0].UpdatedAt)

		// Declared again, it is watched again from now, with a fresh grace
		// window.
		b.clock.Set(t0.Add(4 * time.Hour))
		res = b.declare("billing", invoices, reports)
		back := res.Monitors[1]
		require.Equal(t, rep.ID, back.ID)
		require.True(t, back.Discovered)
		require.False(t, back.Paused)
		require.Equal(t, "up", back.Status)
		require.Equal(t, *back.LastPingAt, t0.Add(time.Minute))

		// An empty set would undeclare everything: refused, unless meant.
		b.declare("cron-box", map[string]any{"slug": "backup"})
		r = b.do(http.MethodPut, "/api/v1/sources/billing/monitors", b.rw, map[string]any{"monitors": []any{}})
		require.Equal(t, http.StatusConflict, r.status, "%s", r.body)
		require.Contains(t, string(r.body), "all of the 2 monitors source")
		require.Contains(t, string(r.body), "allow_mass_undeclare=true")
		require.Len(t, b.declare("billing", invoices, reports).Undeclared, 0, "nothing was written")
		res = b.declareQuery("billing", "allow_mass_undeclare=true")
		require.Empty(t, res.Monitors)
		require.Len(t, res.Undeclared, 2)
		backup, err := b.store.MonitorGetBySlug(ctx, b.prj.ID, "backup")
		require.NoError(t, err)
		require.True(t, backup.Discovered)
		require.False(t, backup.Paused)
	})
}

// TestDeclarePersonWins checks the rule between a person and a source: a
// setting a person changed through the API stays as the person set it,
// whatever the source declares, until the person hands it back.
func TestDeclarePersonWins(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		spec := map[string]any{"slug": "invoices", "grace_seconds": 600, "tags": []string{"a"}}
		m := b.declare("billing", spec).Monitors[0]

		r := b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"grace_seconds": 1200})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var patched api.Monitor
		r.json(t, &patched)
		require.Equal(t, []string{"grace_seconds"}, patched.PersonFields)

		spec["tags"] = []string{"b"}
		res := b.declare("billing", spec)
		got := res.Monitors[0]
		require.EqualValues(t, 1200, got.GraceSeconds, "the person's setting stays")
		require.Equal(t, []string{"b"}, got.Tags, "the source's other settings apply")
		require.Equal(t, []string{"grace_seconds"}, got.OverriddenFields)
		require.Equal(t, []string{"grace_seconds"}, got.PersonFields)
		require.EqualValues(t, 1200, b.getMonitor(m.ID).GraceSeconds)

		spec["grace_seconds"] = 1200
		res = b.declare("billing", spec)
		require.Empty(t, res.Monitors[0].OverriddenFields, "nothing overridden when they agree")

		// The person hands the field back; the next declaration sets it.
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"person_fields": []string{}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		spec["grace_seconds"] = 700
		res = b.declare("billing", spec)
		require.EqualValues(t, 700, res.Monitors[0].GraceSeconds)
		require.Empty(t, res.Monitors[0].PersonFields)

		// A monitor a person paused stays paused when its source stops
		// declaring it and declares it again.
		r = b.do(http.MethodPost, "/api/v1/monitors/"+m.ID+"/pause", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		b.declareQuery("billing", "allow_mass_undeclare=true")
		res = b.declare("billing", spec)
		require.True(t, res.Monitors[0].Paused, "a person paused it")
		require.True(t, res.Monitors[0].Discovered)
		r = b.do(http.MethodPost, "/api/v1/monitors/"+m.ID+"/resume", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		res = b.declare("billing", spec)
		require.False(t, res.Monitors[0].Paused)
	})
}

// TestDeclareHandOver: a monitor a person made is not taken by a source
// that declares its slug (409), until a person hands it over.
func TestDeclareHandOver(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		m := b.createMonitor(map[string]any{"name": "legacy", "grace_seconds": 60})
		b.ping(m.PingKey, monitors.PingSuccess, t0)
		r := b.do(http.MethodPut, "/api/v1/sources/billing/monitors", b.rw, map[string]any{"monitors": []map[string]any{{"slug": "legacy"}}})
		require.Equal(t, http.StatusConflict, r.status)
		e := r.errorBody(t)
		require.Equal(t, "monitors[0].slug", e.Field)
		require.Contains(t, e.Error, `"legacy" is the slug of a monitor a person created`)
		require.Contains(t, e.Error, `{"source": "billing"}`)

		r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"source": "billing"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		res := b.declare("billing", map[string]any{"slug": "legacy", "grace_seconds": 90})
		require.Equal(t, m.ID, res.Monitors[0].ID, "the same monitor, with its history")
		require.True(t, res.Monitors[0].Discovered)
		require.EqualValues(t, 90, res.Monitors[0].GraceSeconds)
		require.NotNil(t, res.Monitors[0].LastPingAt)

		// Taken back from the source, it is a person's again.
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"source": ""})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		res = b.declare("billing")
		require.Empty(t, res.Undeclared, "no longer the source's")
		require.False(t, b.getMonitor(m.ID).Paused)
	})
}

// TestDeclareConcurrent declares one source from several callers at once,
// as replicas of one application do at start-up: no error, no duplicate,
// and every caller gets the same monitors. Each round declares new slugs,
// released to all callers at the same instant.
func TestDeclareConcurrent(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		const (
			callers = 8
			rounds  = 6
		)
		var specs []map[string]any
		for round := range rounds {
			for _, slug := range []string{"a", "b", "c", "d"} {
				specs = append(specs, map[string]any{"slug": slug + itoa(round),
					"schedule": map[string]any{"kind": "cron", "expr": "*/5 * * * *"}})
			}
			results := make([]api.DeclarationResult, callers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() {
					<-start
					// Not b.do: its require calls must stay on the test's
					// goroutine.
					results[i] = b.declareFromGoroutine(t, "app", specs)
				})
			}
			close(start)
			wg.Wait()
			list, err := b.store.MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: b.prj.ID})
			require.NoError(t, err)
			require.Len(t, list, len(specs), "one monitor per slug")
			ids := map[string]string{}
			for _, m := range list {
				ids[m.Slug] = m.ID
			}
			for i, res := range results {
				require.Len(t, res.Monitors, len(specs), "round %d, caller %d", round, i)
				for _, m := range res.Monitors {
					require.Equal(t, ids[m.Slug], m.ID, "round %d, caller %d, %s", round, i, m.Slug)
				}
			}
		}
	})
}

func TestRetryAdvice(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		// Hangfire's default: 10 retries whose longest delays add up to
		// about 4h45m (reference/hangfire-automatic-retry.md).
		hangfire := map[string]any{"name": "hangfire-default", "max_retries": 10,
			"max_delays_seconds": []int{44, 74, 118, 212, 416, 814, 1514, 2648, 4372, 6866}}
		var formula []int
		for _, d := range retry.HangfireDefault().MaxDelays() {
			formula = append(formula, int(d/time.Second))
		}
		require.Equal(t, hangfire["max_delays_seconds"], formula, "the delays are the SDK's formula with r = 29")
		res := b.declare("app",
			map[string]any{"slug": "hourly", "schedule": map[string]any{"kind": "cron", "expr": "0 * * * *"}, "retry_policy": hangfire},
			map[string]any{"slug": "daily", "schedule": map[string]any{"kind": "cron", "expr": "0 3 * * *", "tz": "Europe/Berlin"},
				"retry_policy": hangfire, "deadline_seconds": 3600},
			map[string]any{"slug": "every-2h", "schedule": map[string]any{"kind": "interval", "every_seconds": 7200}, "retry_policy": hangfire},
			map[string]any{"slug": "no-retries", "retry_policy": map[string]any{"max_retries": 0}},
			map[string]any{"slug": "short", "schedule": map[string]any{"kind": "cron", "expr": "*/10 * * * *"},
				"retry_policy": map[string]any{"max_retries": 3, "max_delays_seconds": []int{60}}},
			map[string]any{"slug": "none"},
		)
		got := bySlug(res.Monitors)
		require.EqualValues(t, 17078, *got["hourly"].RetryChainSeconds)
		require.Len(t, got["hourly"].Warnings, 1)
		require.Contains(t, got["hourly"].Warnings[0], "retry_policy: the retries of one run may take up to 4h44m")
		require.Contains(t, got["hourly"].Warnings[0], "longer than the 1h between runs")
		require.Contains(t, got["hourly"].Warnings[0], "overlap the next occurrence")

		require.Len(t, got["daily"].Warnings, 1, "a day is longer than the chain, but the deadline is not")
		require.Contains(t, got["daily"].Warnings[0], "deadline_seconds: the retries of one run may take up to 4h44m, longer than the deadline of 1h")

		require.Len(t, got["every-2h"].Warnings, 1, "interval: the gap is every_seconds")
		require.Contains(t, got["every-2h"].Warnings[0], "longer than the 2h between runs")

		require.EqualValues(t, 0, *got["no-retries"].RetryChainSeconds)
		require.Empty(t, got["no-retries"].Warnings)
		require.EqualValues(t, 180, *got["short"].RetryChainSeconds, "the last delay repeats")
		require.Empty(t, got["short"].Warnings, "3m of retries fit in 10m")
		require.Nil(t, got["none"].RetryChainSeconds)
		require.Empty(t, got["none"].Warnings)

		// A GET shows the same.
		require.Equal(t, got["hourly"].Warnings, b.getMonitor(got["hourly"].ID).Warnings)
	})
}

// TestDeclareDropsOneJob: a deploy drops one job of a source. Its open
// incident is closed, with no incident.resolved (nothing recovered), one
// monitor.undeclared is recorded, and the monitor is undeclared, listed
// under that status; declared again, monitor.redeclared follows.
func TestDeclareDropsOneJob(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		jobs := []map[string]any{{"slug": "invoices"}, {"slug": "reports"}, {"slug": "cleanup"}}
		res := b.declare("billing", jobs...)
		rep := res.Monitors[1]
		b.ping(rep.PingKey, monitors.PingFail, t0)
		ins, err := b.store.IncidentList(ctx, &monitors.IncidentListParams{ProjectID: b.prj.ID, OpenOnly: true})
		require.NoError(t, err)
		require.Len(t, ins, 1)

		// Two of three at once is more than half: refused, nothing written.
		r := b.do(http.MethodPut, "/api/v1/sources/billing/monitors", b.rw, map[string]any{"monitors": []any{jobs[0]}})
		require.Equal(t, http.StatusConflict, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `2 of the 3 monitors source \"billing\" declares, more than half`)

		b.clock.Set(t0.Add(time.Hour))
		res = b.declare("billing", jobs[0], jobs[2])
		require.Len(t, res.Undeclared, 1)
		require.Equal(t, "undeclared", res.Undeclared[0].Status)
		in, err := b.store.IncidentGet(ctx, b.prj.ID, ins[0].ID)
		require.NoError(t, err)
		require.NotNil(t, in.ResolvedAt)
		require.Equal(t, `closed: no longer declared by source "billing"`, in.ResolveSummary)

		events := func() []monitors.IncidentEventKind {
			evs, err := b.store.IncidentEventList(ctx, &monitors.IncidentEventListParams{ProjectID: b.prj.ID})
			require.NoError(t, err)
			var out []monitors.IncidentEventKind
			for _, e := range evs {
				out = append(out, e.Kind)
				if e.Kind.IsMonitorEvent() {
					require.Empty(t, e.IncidentID)
					require.Equal(t, rep.ID, e.MonitorID)
				}
			}
			return out
		}
		require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventMonitorUndeclared}, events())

		r = b.do(http.MethodGet, "/api/v1/monitors?status=undeclared", b.rw, nil)
		var list api.MonitorList
		r.json(t, &list)
		require.Len(t, list.Monitors, 1)
		require.Equal(t, rep.ID, list.Monitors[0].ID)

		// Pings to it are kept and judge nothing.
		b.ping(rep.PingKey, monitors.PingFail, t0.Add(61*time.Minute))
		require.Equal(t, "undeclared", b.getMonitor(rep.ID).Status)

		b.clock.Set(t0.Add(2 * time.Hour))
		res = b.declare("billing", jobs...)
		require.Equal(t, "up", res.Monitors[1].Status, "watched again, from now")
		require.NotNil(t, res.Monitors[1].NextExpectedAt)
		require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventMonitorUndeclared,
			monitors.EventMonitorRedeclared}, events())
	})
}
