package riverwrap_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
	"github.com/vigilhq/vigil/sdk/riverwrap"
)

// Job kinds, one per behaviour.
type flakyArgs struct{}
type doomedArgs struct{}
type givesUpArgs struct{}
type sleepyArgs struct{}
type hiddenArgs struct{}
type adhocArgs struct{}
type panickyArgs struct{}
type limitedArgs struct{}

func (flakyArgs) Kind() string   { return "flaky" }
func (doomedArgs) Kind() string  { return "doomed" }
func (givesUpArgs) Kind() string { return "gives_up" }
func (sleepyArgs) Kind() string  { return "sleepy" }
func (hiddenArgs) Kind() string  { return "hidden" }
func (adhocArgs) Kind() string   { return "adhoc" }
func (panickyArgs) Kind() string { return "panicky" }
func (limitedArgs) Kind() string { return "limited" }

// quickRetry retries 300 ms later, so River really runs the retries
// within the test.
type quickRetry struct{}

func (quickRetry) NextRetry(*rivertype.JobRow) time.Time {
	return time.Now().Add(300 * time.Millisecond)
}

type testBundle struct {
	srv    *vigiltest.Server
	src    *sdk.Source
	mon    *riverwrap.Monitor
	client *river.Client[*sql.Tx]
	events <-chan *river.Event
}

// openDB opens a fresh River database in a temporary SQLite file.
func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "river.db"))
	require.NoError(t, err)
	db.SetMaxOpenConns(1) // SQLite has one writer; River's driver asks for one connection
	t.Cleanup(func() { _ = db.Close() })
	migrator, err := rivermigrate.New(riversqlite.New(db), nil)
	require.NoError(t, err)
	_, err = migrator.Migrate(context.Background(), rivermigrate.DirectionUp, nil)
	require.NoError(t, err)
	return db
}

func newSDK(t *testing.T, srv *vigiltest.Server) *sdk.Client {
	return sdk.New(srv.URL(), sdk.WithAPIKey(vigiltest.APIKey),
		sdk.WithLogger(slog.New(slog.NewTextHandler(vigiltest.NewLog(t), nil))))
}

func startClient(t *testing.T, b *testBundle, workers *river.Workers, periodic []*river.PeriodicJob) {
	t.Helper()
	ctx := context.Background()
	client, err := river.NewClient(riversqlite.New(openDB(t)), &river.Config{
		Middleware:        []rivertype.Middleware{b.mon},
		RetryPolicy:       b.mon.RetryPolicy(quickRetry{}),
		PeriodicJobs:      periodic,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		Workers:           workers,
		PollOnly:          true,
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Logger:            slog.New(slog.NewTextHandler(vigiltest.NewLog(t), &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	require.NoError(t, err)
	b.client = client
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobCancelled, river.EventKindJobSnoozed, river.EventKindJobInterrupted)
	t.Cleanup(cancel)
	b.events = events
	// Declared before the client starts, so the first runs know their
	// ping URLs.
	require.NoError(t, b.src.Declare(ctx))
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(stopCtx)
	})
}

// waitEvents collects events until done says so. The timeout only fails a
// test that would otherwise hang; nothing waits for it to pass.
func waitEvents(t *testing.T, events <-chan *river.Event, done func([]*river.Event) bool) []*river.Event {
	t.Helper()
	var got []*river.Event
	timeout := time.After(30 * time.Second)
	for !done(got) {
		select {
		case e := <-events:
			got = append(got, e)
		case <-timeout:
			t.Fatalf("timed out waiting for River; got %d events", len(got))
		}
	}
	return got
}

func count(events []*river.Event, kind string, ek river.EventKind) int {
	n := 0
	for _, e := range events {
		if e.Job.Kind == kind && e.Kind == ek {
			n++
		}
	}
	return n
}

// pingsOf renders the pings of one declared slug.
func pingsOf(b *testBundle, slug string) []vigiltest.Ping {
	key := b.srv.DeclaredKey("worker", slug)
	var out []vigiltest.Ping
	for _, p := range b.srv.Pings() {
		if p.Key == key {
			out = append(out, p)
		}
	}
	return out
}

func summary(pings []vigiltest.Ping) []string {
	out := make([]string, len(pings))
	for i, p := range pings {
		out[i] = fmt.Sprintf("%s %s", p.Kind, p.Attempt())
		if p.RetryAt() != "" {
			out[i] += " retry_at"
		}
		if p.RetryIn() != "" {
			out[i] += " retry_in"
		}
	}
	return out
}

func TestMiddlewareReportsRiverAttempts(t *testing.T) {
	t.Parallel()
	srv := vigiltest.New(t)
	src := newSDK(t, srv).Source("worker")
	b := &testBundle{srv: srv, src: src, mon: riverwrap.New(src, riverwrap.WithMaxAttempts(5))}

	var flaky, sleepy atomic.Int32
	var limitedDeadline atomic.Value
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[flakyArgs]) error {
		if flaky.Add(1) <= 2 {
			return errors.New("supplier API: 503")
		}
		return nil
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[doomedArgs]) error {
		return fmt.Errorf("attempt %d: disk full", j.Attempt)
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[givesUpArgs]) error {
		return river.JobCancel(errors.New("account closed"))
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[sleepyArgs]) error {
		if sleepy.Add(1) == 1 {
			return river.JobSnooze(200 * time.Millisecond)
		}
		return nil
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[hiddenArgs]) error { return nil }))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[adhocArgs]) error { return nil }))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[panickyArgs]) error { panic("nil map") }))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[limitedArgs]) error {
		d, _ := ctx.Deadline()
		limitedDeadline.Store(time.Until(d))
		return nil
	}))

	periodic := func(slug string, job sdk.Job, args river.JobArgs, maxAttempts int) *river.PeriodicJob {
		job.Slug = slug
		pj, err := b.mon.PeriodicJob(riverwrap.Interval(time.Hour), job, func() (river.JobArgs, *river.InsertOpts) {
			return args, &river.InsertOpts{MaxAttempts: maxAttempts}
		}, &river.PeriodicJobOpts{RunOnStart: true})
		require.NoError(t, err)
		return pj
	}
	jobs := []*river.PeriodicJob{
		periodic("flaky", sdk.Job{Grace: time.Minute}, flakyArgs{}, 5),
		periodic("doomed", sdk.Job{RetryPolicy: retry.River{MaxAttempts: 2}}, doomedArgs{}, 2),
		periodic("gives-up", sdk.Job{}, givesUpArgs{}, 5),
		periodic("sleepy", sdk.Job{}, sleepyArgs{}, 5),
		periodic("hidden", sdk.Job{NoMonitor: true}, hiddenArgs{}, 5),
		periodic("panicky", sdk.Job{}, panickyArgs{}, 1),
		periodic("limited", sdk.Job{MaxRuntime: 30 * time.Second, RuntimeLimit: true}, limitedArgs{}, 1),
	}
	require.NoError(t, b.mon.Watch("adhoc", sdk.Job{Slug: "adhoc", Name: "Ad-hoc exports"}))
	_, err := b.mon.PeriodicJob(riverwrap.Interval(time.Hour), sdk.Job{Slug: "flaky"}, nil, nil)
	require.ErrorIs(t, err, riverwrap.ErrDuplicateSlug)
	_, err = b.mon.PeriodicJob(riverwrap.Cron("not cron"), sdk.Job{Slug: "x"}, nil, nil)
	require.Error(t, err)
	require.ErrorIs(t, b.mon.Watch("k", sdk.Job{}), riverwrap.ErrNoSlug)

	startClient(t, b, workers, jobs)
	_, err = b.client.Insert(context.Background(), adhocArgs{}, nil)
	require.NoError(t, err)

	events := waitEvents(t, b.events, func(got []*river.Event) bool {
		return count(got, "flaky", river.EventKindJobCompleted) == 1 &&
			count(got, "doomed", river.EventKindJobFailed) == 2 &&
			count(got, "gives_up", river.EventKindJobCancelled) == 1 &&
			count(got, "sleepy", river.EventKindJobCompleted) == 1 &&
			count(got, "hidden", river.EventKindJobCompleted) == 1 &&
			count(got, "adhoc", river.EventKindJobCompleted) == 1 &&
			count(got, "panicky", river.EventKindJobFailed) == 1 &&
			count(got, "limited", river.EventKindJobCompleted) == 1
	})

	// The declaration: periodic jobs with their schedules and River's retry
	// policy; the watched kind without a schedule; the opted-out job absent.
	decl := srv.Declarations()[0]
	slugs := map[string]map[string]any{}
	for _, m := range decl.Monitors {
		slugs[m["slug"].(string)] = m
	}
	require.Len(t, slugs, 7)
	require.NotContains(t, slugs, "hidden")
	require.Equal(t, map[string]any{"kind": "interval", "every_seconds": float64(3600)}, slugs["flaky"]["schedule"])
	require.Equal(t, float64(60), slugs["flaky"]["grace_seconds"])
	require.Equal(t, "river-default", slugs["flaky"]["retry_policy"].(map[string]any)["name"])
	require.Equal(t, float64(4), slugs["flaky"]["retry_policy"].(map[string]any)["max_retries"])
	require.Equal(t, float64(1), slugs["doomed"]["retry_policy"].(map[string]any)["max_retries"])
	require.NotContains(t, slugs["adhoc"], "schedule")
	require.Equal(t, "Ad-hoc exports", slugs["adhoc"]["name"])

	// A job that fails twice, then succeeds: only the success is final.
	flakyPings := pingsOf(b, "flaky")
	require.Equal(t, []string{
		"start 1", "fail 1 retry_at", "start 2", "fail 2 retry_at", "start 3", "success 3",
	}, summary(flakyPings))
	require.Equal(t, "supplier API: 503", flakyPings[1].Body)
	// retry_at is exactly the retry River scheduled (to the second, rounded up).
	var failed []*river.Event
	for _, e := range events {
		if e.Job.Kind == "flaky" && e.Kind == river.EventKindJobFailed {
			failed = append(failed, e)
		}
	}
	require.Len(t, failed, 2)
	for i, e := range failed {
		want := e.Job.ScheduledAt.UTC().Truncate(time.Second)
		if !want.Equal(e.Job.ScheduledAt.UTC()) {
			want = want.Add(time.Second)
		}
		require.Equal(t, want.Format(time.RFC3339), flakyPings[1+2*i].RetryAt())
	}
	for i := 0; i < len(flakyPings); i += 2 {
		require.Equal(t, flakyPings[i].RID(), flakyPings[i+1].RID())
	}

	// Out of attempts: the last failure is final.
	require.Equal(t, []string{"start 1", "fail 1 retry_at", "start 2", "fail 2"}, summary(pingsOf(b, "doomed")))
	// JobCancel ends the job at once: final.
	require.Equal(t, []string{"start 1", "fail 1"}, summary(pingsOf(b, "gives-up")))
	require.Equal(t, "JobCancelError: account closed", pingsOf(b, "gives-up")[1].Body)
	// A snooze is not an attempt: the run is closed as cancelled.
	require.Equal(t, []string{"start 1", "cancel 1", "start 1", "success 1"}, summary(pingsOf(b, "sleepy")))
	require.Equal(t, []string{"start 1", "success 1"}, summary(pingsOf(b, "adhoc")))
	panicky := pingsOf(b, "panicky")
	require.Equal(t, []string{"start 1", "fail 1"}, summary(panicky))
	require.Contains(t, panicky[1].Body, "panic: nil map")
	require.Equal(t, []string{"start 1", "success 1"}, summary(pingsOf(b, "limited")))
	d := limitedDeadline.Load().(time.Duration)
	// Below River's own JobTimeout (one minute by default), which also applies.
	require.Greater(t, d, 29*time.Second, "max runtime is the context deadline")
	require.LessOrEqual(t, d, 30*time.Second)
	for _, p := range srv.Pings() {
		require.NotEmpty(t, p.Key, "every ping went to a declared monitor")
	}
}

func TestShutdownReportsCancel(t *testing.T) {
	t.Parallel()
	srv := vigiltest.New(t)
	src := newSDK(t, srv).Source("worker")
	b := &testBundle{srv: srv, src: src, mon: riverwrap.New(src)}
	running := make(chan struct{})
	var once sync.Once
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[flakyArgs]) error {
		once.Do(func() { close(running) })
		<-ctx.Done()
		return ctx.Err()
	}))
	require.NoError(t, b.mon.Watch("flaky", sdk.Job{Slug: "long"}))
	startClient(t, b, workers, nil)
	_, err := b.client.Insert(context.Background(), flakyArgs{}, nil)
	require.NoError(t, err)
	<-running
	// The host shuts down: River cancels the job and will run it again
	// without counting the attempt.
	require.NoError(t, b.client.StopAndCancel(context.Background()))
	waitEvents(t, b.events, func(got []*river.Event) bool { return count(got, "flaky", river.EventKindJobInterrupted) == 1 })
	require.Equal(t, []string{"start 1", "cancel 1"}, summary(pingsOf(b, "long")))
}

func TestMonitorWithoutSharedRetryPolicyReportsWorstCase(t *testing.T) {
	t.Parallel()
	srv := vigiltest.New(t)
	c := newSDK(t, srv)
	src := c.Source("worker")
	mon := riverwrap.New(src)
	require.NoError(t, mon.Watch("flaky", sdk.Job{Slug: "x"}))
	require.NoError(t, src.Declare(context.Background()))
	row := &rivertype.JobRow{ID: 1, Kind: "flaky", Attempt: 2, MaxAttempts: 5, Errors: []rivertype.AttemptError{{}}}
	before := time.Now()
	err := mon.Work(context.Background(), row, func(context.Context) error { return errors.New("boom") })
	require.EqualError(t, err, "boom")
	pings := srv.Pings()
	require.Equal(t, []string{"start 2", "fail 2 retry_at"}, summary(pings))
	at, err := time.Parse(time.RFC3339, pings[1].RetryAt())
	require.NoError(t, err)
	// River's default after two errors: 2^4 = 16 s, at most 17.6 s with jitter.
	require.WithinRange(t, at, before.Add(17*time.Second), time.Now().Add(19*time.Second))

	// Jobs nobody watches pass through without a ping.
	require.NoError(t, mon.Work(context.Background(), &rivertype.JobRow{Kind: "other"}, func(context.Context) error { return nil }))
	require.Len(t, srv.Pings(), 2)
}
