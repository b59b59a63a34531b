package sdk_test

// These tests run the SDK against a real Vigil server (package realvigil)
// on each database, and check what Vigil made of the pings: the runs, the
// incidents and the monitors it stored.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/realvigil"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
)

type realBundle struct {
	v      *realvigil.Vigil
	client *sdk.Client
	sleeps *vigiltest.Sleeps
	log    *vigiltest.Log
}

// forEachDatabase runs test against a fresh real Vigil on each database.
func forEachDatabase(t *testing.T, test func(t *testing.T, b *realBundle)) {
	t.Helper()
	for name, db := range realvigil.Databases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := &realBundle{v: realvigil.Start(t, realvigil.WithDatabase(db)), sleeps: &vigiltest.Sleeps{}, log: vigiltest.NewLog(t)}
			// Waits between attempts are recorded, not slept: Vigil sees
			// the retries come at once, well before their announced time.
			b.client = sdk.New(b.v.URL, sdk.WithAPIKey(b.v.APIKey), sdk.WithSleepFunc(b.sleeps.Sleep),
				sdk.WithLogger(slog.New(slog.NewTextHandler(b.log, nil))))
			test(t, b)
		})
	}
}

// monitor creates a monitor that expects a run every hour.
func (b *realBundle) monitor(t *testing.T, slug string, fields map[string]any) (string, sdk.Monitor) {
	t.Helper()
	all := map[string]any{"slug": slug, "schedule": map[string]any{"kind": "interval", "every_seconds": 3600}}
	for k, v := range fields {
		all[k] = v
	}
	m := b.v.CreateMonitor(t, all)
	return m.ID, sdk.Key(m.PingKey)
}

// storedRuns renders the monitor's runs as the store keeps them, oldest
// first: "outcome attempt", " retry" when a retry was announced.
func (b *realBundle) storedRuns(t *testing.T, id string) []string {
	t.Helper()
	runs, err := b.v.Store().RunList(context.Background(), &monitors.HistoryListParams{ProjectID: b.v.ProjectID, MonitorID: id, Limit: 100})
	require.NoError(t, err)
	out := make([]string, len(runs))
	for i, r := range runs {
		s := string(r.Outcome)
		if s == "" {
			s = "open"
		}
		s += fmt.Sprintf(" %d", r.Attempt)
		if r.WillRetry {
			s += " retry"
		}
		out[len(runs)-1-i] = s
	}
	return out
}

// storedPings returns the monitor's pings as the store keeps them, oldest
// first.
func (b *realBundle) storedPings(t *testing.T, id string) []*monitors.Ping {
	t.Helper()
	pings, err := b.v.Store().PingList(context.Background(), &monitors.HistoryListParams{ProjectID: b.v.ProjectID, MonitorID: id, Limit: 100})
	require.NoError(t, err)
	for i, j := 0, len(pings)-1; i < j; i, j = i+1, j-1 {
		pings[i], pings[j] = pings[j], pings[i]
	}
	return pings
}

// storedIncidents renders the monitor's incidents as the store keeps them,
// oldest first: "kind", or "kind resolved".
func (b *realBundle) storedIncidents(t *testing.T, id string) []string {
	t.Helper()
	incs, err := b.v.Store().IncidentList(context.Background(), &monitors.IncidentListParams{ProjectID: b.v.ProjectID, MonitorID: id, Limit: 100})
	require.NoError(t, err)
	out := make([]string, len(incs))
	for i, inc := range incs {
		s := string(inc.Kind)
		if inc.ResolvedAt != nil {
			s += " resolved"
		}
		out[len(incs)-1-i] = s
	}
	return out
}

func TestRealRetriedTwiceThenSucceededOpensNoIncident(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, b *realBundle) {
		id, m := b.monitor(t, "sync-prices", map[string]any{"alert_on_failure": "final"})
		calls := 0
		err := b.client.RunWithRetries(context.Background(), m, func(context.Context) error {
			calls++
			if calls < 3 {
				return fmt.Errorf("supplier answered 503 (attempt %d)", calls)
			}
			return nil
		}, sdk.WithRetryPolicy(retry.Hangfire{Attempts: 3, DelaysInSeconds: []int{30, 120, 600}}))
		require.NoError(t, err)
		require.Equal(t, []time.Duration{30 * time.Second, 2 * time.Minute}, b.sleeps.Waits())

		require.Equal(t, []string{"fail 1 retry", "fail 2 retry", "success 3"}, b.storedRuns(t, id))
		require.Empty(t, b.storedIncidents(t, id), "a failure the scheduler retries is not final")
		require.Equal(t, "up", b.v.Monitor(t, "sync-prices").Status)

		pings := b.storedPings(t, id)
		require.Len(t, pings, 6)
		for i, want := range []monitors.PingKind{"start", "fail", "start", "fail", "start", "success"} {
			require.Equal(t, want, pings[i].Kind)
			require.Equal(t, i/2+1, pings[i].Attempt)
			require.Equal(t, pings[i-i%2].RID, pings[i].RID, "start and finish share a run id")
			require.Equal(t, "vigil-go-sdk/1", pings[i].UserAgent)
		}
		require.NotEqual(t, pings[0].RID, pings[2].RID, "each attempt is its own run")
		require.Equal(t, "supplier answered 503 (attempt 1)", pings[1].Body)
		require.WithinDuration(t, pings[1].At.Add(30*time.Second), *pings[1].RetryAt, 2*time.Second)
		require.WithinDuration(t, pings[3].At.Add(2*time.Minute), *pings[3].RetryAt, 2*time.Second)
		require.Nil(t, pings[5].RetryAt)
		require.NotNil(t, pings[5].DurationMS, "the SDK measured the run")
	})
}

func TestRealFinalFailureOpensOneIncident(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, b *realBundle) {
		ctx := context.Background()
		id, m := b.monitor(t, "nightly-import", nil)
		failing := func(context.Context) error { return errors.New("disk full") }

		err := b.client.RunWithRetries(ctx, m, failing, sdk.WithRetryPolicy(retry.Hangfire{Attempts: 2, DelaysInSeconds: []int{60}}))
		require.EqualError(t, err, "disk full")
		require.Equal(t, []string{"fail 1 retry", "fail 2 retry", "fail 3"}, b.storedRuns(t, id))
		require.Equal(t, []string{"failed"}, b.storedIncidents(t, id), "only the last, final failure alerts")
		incidents := b.v.Incidents(t, id)
		require.Contains(t, incidents[0].Summary, "attempt 3, final")
		require.Equal(t, "down", b.v.Monitor(t, "nightly-import").Status)

		// Failing again keeps the one open incident.
		require.Error(t, b.client.Run(ctx, m, failing))
		require.Equal(t, []string{"failed"}, b.storedIncidents(t, id))

		// A permanent error is final at once, whatever the policy.
		require.Error(t, b.client.RunWithRetries(ctx, m, func(context.Context) error {
			return sdk.Permanent(errors.New("bad input"))
		}, sdk.WithRetryPolicy(retry.HangfireDefault())))
		require.Equal(t, []string{"fail 1 retry", "fail 2 retry", "fail 3", "fail 1", "fail 1"}, b.storedRuns(t, id))

		// The next success resolves it.
		require.NoError(t, b.client.Run(ctx, m, func(context.Context) error { return nil }))
		require.Equal(t, []string{"failed resolved"}, b.storedIncidents(t, id))
		require.Equal(t, "up", b.v.Monitor(t, "nightly-import").Status)
	})
}

func TestRealPanicIsAFailedRunAndRepanics(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, b *realBundle) {
		id, m := b.monitor(t, "panicky", nil)
		require.PanicsWithValue(t, "nil map write", func() {
			_ = b.client.Run(context.Background(), m, func(context.Context) error { panic("nil map write") },
				sdk.WithRetryPolicy(retry.HangfireDefault()))
		})
		require.Equal(t, []string{"fail 1"}, b.storedRuns(t, id), "a panic is final: the job did not return")
		require.Equal(t, []string{"failed"}, b.storedIncidents(t, id))
		pings := b.storedPings(t, id)
		require.True(t, strings.HasPrefix(pings[1].Body, "panic: nil map write"), pings[1].Body)
		require.Contains(t, pings[1].Body, "goroutine", "the stack is kept with the ping")
	})
}

func TestRealShutdownMidRunIsCancelled(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, b *realBundle) {
		id, m := b.monitor(t, "long-export", nil)
		ctx, cancel := context.WithCancel(context.Background())
		err := b.client.RunWithRetries(ctx, m, func(ctx context.Context) error {
			cancel() // the host shuts down while the job runs
			<-ctx.Done()
			return fmt.Errorf("copy rows: %w", ctx.Err())
		}, sdk.WithRetryPolicy(retry.HangfireDefault()))
		require.ErrorIs(t, err, context.Canceled)
		require.Empty(t, b.sleeps.Waits(), "a shutdown is not retried")

		require.Equal(t, []string{"cancelled 1"}, b.storedRuns(t, id))
		require.Empty(t, b.storedIncidents(t, id))
		mon := b.v.Monitor(t, "long-export")
		require.Equal(t, "up", mon.Status, "a cancelled run is neither a failure nor an open run")
		require.Equal(t, "copy rows: context canceled", b.storedPings(t, id)[1].Body)
	})
}

func TestRealVigilDownDoesNotHoldTheJob(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	m := v.CreateMonitor(t, map[string]any{"slug": "while-down"})
	v.Stop(t) // Vigil goes down; its port now refuses connections

	log := vigiltest.NewLog(t)
	// The SDK's defaults: real timeouts and backoff.
	client := sdk.New(v.URL, sdk.WithLogger(slog.New(slog.NewTextHandler(log, nil))))
	start := time.Now()
	var jobStartedAfter time.Duration
	err := client.Run(context.Background(), sdk.Key(m.PingKey), func(context.Context) error {
		jobStartedAfter = time.Since(start)
		return nil
	})
	require.NoError(t, err, "Vigil's failures are not the job's")
	require.Less(t, jobStartedAfter, 500*time.Millisecond, "the job does not wait for the start ping, which takes 0.75 s to give up")
	// Two pings, each tried 3 times 0.25 s and 0.5 s apart: about 1.5 s.
	require.Less(t, time.Since(start), 3*time.Second)
	require.Contains(t, log.String(), "vigil: unavailable")
	require.NotContains(t, log.String(), m.PingKey, "the ping key is not logged")
}

func TestRealSlugWithCreateMakesTheMonitor(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, b *realBundle) {
		ctx := context.Background()
		err := b.client.Ping(ctx, sdk.Slug(b.v.ProjectPingKey, "made-by-ping"), sdk.KindStart, nil)
		require.ErrorIs(t, err, sdk.ErrNotFound, "without create, an unknown slug is not found")
		_, ok := b.v.FindMonitor(t, "made-by-ping")
		require.False(t, ok)

		m := sdk.Slug(b.v.ProjectPingKey, "made-by-ping").WithCreate()
		require.NoError(t, b.client.Run(ctx, m, func(context.Context) error { return nil }))
		mon := b.v.Monitor(t, "made-by-ping")
		require.Equal(t, []string{"success 1"}, b.storedRuns(t, mon.ID))
		require.Equal(t, "up", mon.Status)
		require.False(t, mon.Discovered, "a monitor made by a ping has no source")

		err = b.client.Ping(ctx, sdk.Slug("not-the-project-key", "made-by-ping"), sdk.KindStart, nil)
		require.ErrorIs(t, err, sdk.ErrNotFound)
	})
}

func TestRealDeclareCreatesPausesAndResumes(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, b *realBundle) {
		ctx := context.Background()
		invoices := sdk.MonitorSpec{
			Name: "Nightly invoices", Slug: "nightly-invoices", Tags: []string{"billing"},
			Schedule:     sdk.Cron("0 2 * * *", "Europe/Berlin"),
			GraceSeconds: 600, MaxRuntimeSeconds: 3600, DeadlineSeconds: 10800,
			AlertOnFailure: "final", RecoveryThreshold: 2, Overlap: "ignore",
			RetryPolicy: sdk.RetrySpec(retry.Hangfire{Attempts: 3, DelaysInSeconds: []int{30, 120, 600}}),
		}
		drain := sdk.MonitorSpec{Slug: "queue-drain", Schedule: sdk.Every(5 * time.Minute)}
		declared, err := b.client.Declare(ctx, "billing-service", []sdk.MonitorSpec{invoices, drain})
		require.NoError(t, err)
		require.Len(t, declared, 2)
		require.Equal(t, b.v.URL+"/ping/"+declared[0].PingKey, declared[0].PingURL)
		require.True(t, declared[0].Discovered)
		require.Equal(t, "billing-service", declared[0].Source)
		require.Nil(t, declared[0].LastPingAt)

		mon := b.v.Monitor(t, "nightly-invoices")
		require.Equal(t, "billing-service discovered new", realvigil.StatusLine(mon))
		require.Equal(t, "Nightly invoices", mon.Name)
		require.Equal(t, []string{"billing"}, mon.Tags)
		require.Equal(t, "cron", mon.Schedule.Kind)
		require.Equal(t, "0 2 * * *", mon.Schedule.Expr)
		require.Equal(t, "Europe/Berlin", mon.Schedule.TZ)
		require.Equal(t, int64(600), mon.GraceSeconds)
		require.Equal(t, int64(10800), mon.DeadlineSeconds)
		require.Equal(t, 2, mon.RecoveryThreshold)
		require.Equal(t, "ignore", mon.Overlap)
		require.Equal(t, []int64{30, 120, 600}, mon.RetryPolicy.MaxDelaysSeconds)
		require.Equal(t, "billing-service discovered new", realvigil.StatusLine(b.v.Monitor(t, "queue-drain")))

		// The SDK pings a declared monitor by the ping URL Vigil returned.
		require.NoError(t, b.client.Run(ctx, declared[1].Monitor(), func(context.Context) error { return nil }))
		require.Equal(t, []string{"success 1"}, realvigil.RunOutcomes(b.v.Runs(t, declared[1].ID)))

		// queue-drain is gone from the code: undeclared, not paused, its
		// history kept.
		again, err := b.client.Declare(ctx, "billing-service", []sdk.MonitorSpec{invoices})
		require.NoError(t, err)
		require.Len(t, again, 1)
		require.Equal(t, declared[0].PingKey, again[0].PingKey, "declaring again keeps the ping key")
		require.Equal(t, "billing-service undiscovered undeclared", realvigil.StatusLine(b.v.Monitor(t, "queue-drain")))
		require.Len(t, b.v.Runs(t, declared[1].ID), 1)

		// Declared again, it is watched again from now.
		back, err := b.client.Declare(ctx, "billing-service", []sdk.MonitorSpec{invoices, drain})
		require.NoError(t, err)
		require.Equal(t, declared[1].PingKey, back[1].PingKey)
		require.NotNil(t, back[1].LastPingAt, "Vigil returns the last ping")
		require.Equal(t, "billing-service discovered up", realvigil.StatusLine(b.v.Monitor(t, "queue-drain")))

		// An empty set would undeclare everything of the source: Vigil
		// refuses it, and the SDK never asks for it anyway.
		_, err = b.client.Declare(ctx, "billing-service", nil)
		require.ErrorIs(t, err, sdk.ErrBadRequest)
		require.ErrorContains(t, err, "409")
		require.ErrorContains(t, err, "allow_mass_undeclare")
		for _, m := range b.v.Monitors(t, "billing-service") {
			require.Equal(t, "billing-service discovered", realvigil.StatusLine(m)[:len("billing-service discovered")], m.Slug)
		}

		// Vigil's refusals come back as the SDK's errors.
		_, err = sdk.New(b.v.URL, sdk.WithAPIKey("vk_wrong")).Declare(ctx, "billing-service", nil)
		require.ErrorIs(t, err, sdk.ErrUnauthorized)
		_, err = b.client.Declare(ctx, "billing-service", []sdk.MonitorSpec{{Slug: "bad", Schedule: sdk.Cron("0 0 30 2 *", "")}})
		require.ErrorIs(t, err, sdk.ErrBadRequest)
		require.ErrorContains(t, err, "schedule", "Vigil's sentence names the field")
	})
}

// TestRealTooFastBackup: a job declared with MinRuntime that returns at
// once is reported, by its start and success pings, as too fast.
func TestRealTooFastBackup(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, b *realBundle) {
		ctx := context.Background()
		job := sdk.Job{Slug: "nightly-backup", MaxRuntime: time.Hour, MinRuntime: time.Minute}
		declared, err := b.client.Declare(ctx, "backups", []sdk.MonitorSpec{job.Spec(sdk.Cron("0 2 * * *", "UTC"))})
		require.NoError(t, err)
		require.Equal(t, int64(60), b.v.Monitor(t, "nightly-backup").MinRuntimeSeconds)
		require.NoError(t, b.client.Run(ctx, declared[0].Monitor(), func(context.Context) error { return nil }, job.RunOptions()...))
		require.Equal(t, []string{"too_fast"}, b.storedIncidents(t, declared[0].ID))
	})
}

// TestRealDependsOn: jobs declared with DependsOn by slug, one of the same
// declaration, depend on those monitors by ID in Vigil; a declaration
// whose dependencies form a cycle is refused, naming it.
func TestRealDependsOn(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, b *realBundle) {
		ctx := context.Background()
		every := sdk.Every(time.Hour)
		db := sdk.Job{Slug: "db-check"}
		backup := sdk.Job{Slug: "backup", DependsOn: []string{"db-check"}}
		report := sdk.Job{Slug: "report", DependsOn: []string{"backup", "db-check"}}
		declared, err := b.client.Declare(ctx, "etl", []sdk.MonitorSpec{db.Spec(every), backup.Spec(every), report.Spec(every)})
		require.NoError(t, err)
		require.Equal(t, []string{declared[0].ID}, b.v.Monitor(t, "backup").DependsOn)
		require.Equal(t, []string{declared[1].ID, declared[0].ID}, b.v.Monitor(t, "report").DependsOn)

		db.DependsOn = []string{"report"}
		_, err = b.client.Declare(ctx, "etl", []sdk.MonitorSpec{db.Spec(every), backup.Spec(every), report.Spec(every)})
		require.ErrorIs(t, err, sdk.ErrBadRequest)
		require.ErrorContains(t, err, "depends_on: cycle db-check → report → backup → db-check")
		require.Empty(t, b.v.Monitor(t, "db-check").DependsOn, "nothing stored")
	})
}
