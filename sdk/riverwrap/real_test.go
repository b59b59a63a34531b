package riverwrap_test

// These tests run a real River client on SQLite, in real time with retries
// 300 ms apart, against a real Vigil server (package realvigil), and check
// the monitors, runs and incidents Vigil made of the declarations and pings.

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/realvigil"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/riverwrap"
)

func realSource(t *testing.T, v *realvigil.Vigil) *sdk.Source {
	c := sdk.New(v.URL, sdk.WithAPIKey(v.APIKey), sdk.WithLogger(slog.New(slog.NewTextHandler(vigiltest.NewLog(t), nil))))
	return c.Source("worker")
}

func TestRealMiddlewareAgainstVigil(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	src := realSource(t, v)
	b := &testBundle{src: src, mon: riverwrap.New(src, riverwrap.WithMaxAttempts(5))}

	var flaky atomic.Int32
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[flakyArgs]) error {
		if flaky.Add(1) <= 2 {
			return errors.New("supplier API: 503")
		}
		return nil
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[doomedArgs]) error {
		return errors.New("disk full")
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[givesUpArgs]) error {
		return river.JobCancel(errors.New("account closed"))
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[panickyArgs]) error { panic("nil map write") }))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[hiddenArgs]) error { return nil }))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[adhocArgs]) error { return nil }))

	periodic := func(slug string, job sdk.Job, args river.JobArgs, maxAttempts int) *river.PeriodicJob {
		job.Slug = slug
		pj, err := b.mon.PeriodicJob(riverwrap.Cron("0 2 * * *"), job, func() (river.JobArgs, *river.InsertOpts) {
			return args, &river.InsertOpts{MaxAttempts: maxAttempts}
		}, &river.PeriodicJobOpts{RunOnStart: true})
		require.NoError(t, err)
		return pj
	}
	jobs := []*river.PeriodicJob{
		periodic("flaky", sdk.Job{AlertOnFailure: "final"}, flakyArgs{}, 5),
		periodic("doomed", sdk.Job{}, doomedArgs{}, 2),
		periodic("gives-up", sdk.Job{}, givesUpArgs{}, 5),
		periodic("panicky", sdk.Job{}, panickyArgs{}, 1),
		periodic("hidden", sdk.Job{NoMonitor: true}, hiddenArgs{}, 5),
	}
	require.NoError(t, b.mon.Watch("adhoc", sdk.Job{Slug: "adhoc", Name: "Ad-hoc exports"}))

	startClient(t, b, workers, jobs)
	_, err := b.client.Insert(context.Background(), adhocArgs{}, nil)
	require.NoError(t, err)
	events := waitEvents(t, b.events, func(got []*river.Event) bool {
		return count(got, "flaky", river.EventKindJobCompleted) == 1 &&
			count(got, "doomed", river.EventKindJobFailed) == 2 &&
			count(got, "gives_up", river.EventKindJobCancelled) == 1 &&
			count(got, "panicky", river.EventKindJobFailed) == 1 &&
			count(got, "hidden", river.EventKindJobCompleted) == 1 &&
			count(got, "adhoc", river.EventKindJobCompleted) == 1
	})

	// Declared before the client started; the opted-out job is not.
	declared := v.Monitors(t, "worker")
	require.Equal(t, []string{"adhoc", "doomed", "flaky", "gives-up", "panicky"}, realvigil.Slugs(declared))
	require.Len(t, v.Monitors(t, ""), 5, "an opted-out job is not declared")
	for _, m := range declared {
		require.True(t, m.Discovered, m.Slug)
		require.Equal(t, "worker", m.Source, m.Slug)
	}
	flakyMon := v.Monitor(t, "flaky")
	require.Equal(t, "0 2 * * *", flakyMon.Schedule.Expr)
	require.Equal(t, "robfig", flakyMon.Schedule.Dialect, "River runs robfig/cron schedules")
	require.Equal(t, "river-default", flakyMon.RetryPolicy.Name)
	require.Equal(t, 4, flakyMon.RetryPolicy.MaxRetries)
	require.Equal(t, "interval", v.Monitor(t, "adhoc").Schedule.Kind, "a watched kind has Vigil's default schedule")

	// Failing twice, then succeeding: only the success is final.
	require.Equal(t, []string{"fail 1 retry", "fail 2 retry", "success 3"}, realvigil.RunOutcomes(v.Runs(t, flakyMon.ID)))
	require.Empty(t, v.Incidents(t, flakyMon.ID))
	require.Equal(t, "up", v.Monitor(t, "flaky").Status)
	// Vigil keeps the retry time River scheduled (to the second, rounded up).
	pings := v.Pings(t, flakyMon.ID)
	var scheduled []time.Time
	for _, e := range events {
		if e.Job.Kind == "flaky" && e.Kind == river.EventKindJobFailed {
			scheduled = append(scheduled, e.Job.ScheduledAt)
		}
	}
	require.Len(t, scheduled, 2)
	for i, at := range scheduled {
		p := pings[1+2*i]
		require.Equal(t, "fail", p.Kind)
		require.NotNil(t, p.RetryAt)
		require.False(t, p.RetryAt.Before(at.Truncate(time.Second)), "retry_at %s, River %s", p.RetryAt, at)
		require.True(t, p.RetryAt.Before(at.Add(time.Second)), "retry_at %s, River %s", p.RetryAt, at)
	}

	// Out of attempts: exactly one failed incident.
	doomed := v.Monitor(t, "doomed")
	require.Equal(t, []string{"fail 1 retry", "fail 2"}, realvigil.RunOutcomes(v.Runs(t, doomed.ID)))
	require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, doomed.ID)))
	require.Equal(t, "down", doomed.Status)

	// A job that cancels itself is final at once.
	givesUp := v.Monitor(t, "gives-up")
	require.Equal(t, []string{"fail 1"}, realvigil.RunOutcomes(v.Runs(t, givesUp.ID)))
	require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, givesUp.ID)))

	// A panic is a failed run, and goes on to River, which records it.
	panicky := v.Monitor(t, "panicky")
	require.Equal(t, []string{"fail 1"}, realvigil.RunOutcomes(v.Runs(t, panicky.ID)))
	require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, panicky.ID)))
	require.True(t, strings.HasPrefix(v.Pings(t, panicky.ID)[1].Body, "panic: nil map write"))
	for _, e := range events {
		if e.Job.Kind == "panicky" {
			require.Len(t, e.Job.Errors, 1)
			require.Contains(t, e.Job.Errors[0].Error, "nil map write", "River saw the panic")
		}
	}

	adhoc := v.Monitor(t, "adhoc")
	require.Equal(t, []string{"success 1"}, realvigil.RunOutcomes(v.Runs(t, adhoc.ID)))

	// gives-up is removed from the code: the next declaration marks it as
	// no longer discovered, and pauses it.
	b.mon.Remove("gives-up")
	require.NoError(t, b.mon.Declare(context.Background()))
	require.Equal(t, "worker undiscovered undeclared", realvigil.StatusLine(v.Monitor(t, "gives-up")))
	require.Equal(t, []string{"failed resolved"}, realvigil.IncidentKinds(v.Incidents(t, givesUp.ID)), "undeclaring closes its incident")

	// Watched again, it is declared again and watched again from now.
	require.NoError(t, b.mon.Watch("gives_up", sdk.Job{Slug: "gives-up"}))
	require.NoError(t, b.mon.Declare(context.Background()))
	require.Equal(t, "worker discovered up", realvigil.StatusLine(v.Monitor(t, "gives-up")))
}

func TestRealShutdownIsCancelled(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	src := realSource(t, v)
	b := &testBundle{src: src, mon: riverwrap.New(src)}
	running := make(chan struct{})
	var once sync.Once
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[sleepyArgs]) error {
		once.Do(func() { close(running) })
		<-ctx.Done()
		return ctx.Err()
	}))
	require.NoError(t, b.mon.Watch("sleepy", sdk.Job{Slug: "long"}))
	startClient(t, b, workers, nil)
	_, err := b.client.Insert(context.Background(), sleepyArgs{}, nil)
	require.NoError(t, err)
	<-running
	long := v.Monitor(t, "long")
	realvigil.Eventually(t, "the run started", func() bool { return v.Monitor(t, "long").Status == "running" })

	// The host shuts down: River cancels the job and will run it again
	// without counting the attempt.
	require.NoError(t, b.client.StopAndCancel(context.Background()))
	waitEvents(t, b.events, func(got []*river.Event) bool { return count(got, "sleepy", river.EventKindJobInterrupted) == 1 })
	require.Equal(t, []string{"cancelled 1"}, realvigil.RunOutcomes(v.Runs(t, long.ID)))
	require.Empty(t, v.Incidents(t, long.ID))
	require.Equal(t, "up", v.Monitor(t, "long").Status)
}
