package gocronwrap

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/schedspec"
)

// ErrNoSlug is returned by [Scheduler.NewJob] for a monitored job without a
// slug.
var ErrNoSlug = errors.New("gocronwrap: job has no slug")

// ErrDuplicateSlug is returned by [Scheduler.NewJob] for a slug already in
// use.
var ErrDuplicateSlug = errors.New("gocronwrap: slug already added")

// A Schedule is a gocron job definition together with its description for
// Vigil. Build one with [Cron] or [Every].
type Schedule struct {
	def  gocron.JobDefinition
	spec string
	err  error
}

// Cron is gocron.CronJob(crontab, withSeconds): 5 fields, or 6 with seconds
// first; "CRON_TZ=Zone " or "TZ=Zone " may prefix it.
func Cron(crontab string, withSeconds bool) Schedule {
	return Schedule{def: gocron.CronJob(crontab, withSeconds), spec: crontab}
}

// Every is gocron.DurationJob(d).
func Every(d time.Duration) Schedule {
	if d <= 0 {
		return Schedule{err: fmt.Errorf("every %s: want a positive interval", d)}
	}
	return Schedule{def: gocron.DurationJob(d), spec: "@every " + d.String()}
}

// A Scheduler adds monitored jobs to a gocron.Scheduler and keeps their
// monitors declared in a [sdk.Source].
type Scheduler struct {
	s   gocron.Scheduler
	src *sdk.Source
	loc *time.Location

	mu    sync.Mutex
	jobs  map[string]gocron.Job // slug → job
	slugs map[uuid.UUID]string
	stop  context.CancelFunc
	done  chan struct{}
}

// An Option configures a [Scheduler].
type Option func(*Scheduler)

// WithLocation is the time zone given to gocron.WithLocation, declared as
// the tz of cron schedules that name none (default: time.Local, as gocron).
func WithLocation(loc *time.Location) Option {
	return func(s *Scheduler) {
		if loc != nil {
			s.loc = loc
		}
	}
}

// New returns a Scheduler that adds jobs to s and declares them in src.
func New(s gocron.Scheduler, src *sdk.Source, opts ...Option) *Scheduler {
	w := &Scheduler{s: s, src: src, loc: time.Local, jobs: map[string]gocron.Job{}, slugs: map[uuid.UUID]string{}}
	for _, o := range opts {
		o(w)
	}
	return w
}

// NewJob adds fn to the gocron scheduler on schedule, with opts passed on
// to gocron (a name is added from the slug unless opts set one), and
// declares job's monitor, unless job.NoMonitor.
//
// fn gets gocron's job context, which gocron cancels on Shutdown: a run
// stopped that way is reported as cancelled, not failed. Each run is
// reported with a fresh run id; with job.RetryPolicy, a failed run is
// retried in place as the policy says, each retried failure announced with
// attempt and retry_in; with job.RuntimeLimit, job.MaxRuntime is the run's
// context deadline.
func (w *Scheduler) NewJob(schedule Schedule, job sdk.Job, fn func(ctx context.Context) error, opts ...gocron.JobOption) (gocron.Job, error) {
	if schedule.err != nil {
		return nil, fmt.Errorf("add gocron job %s: %w", job.Slug, schedule.err)
	}
	if job.NoMonitor {
		j, err := w.s.NewJob(schedule.def, gocron.NewTask(func(ctx context.Context) error { return fn(ctx) }), opts...)
		if err != nil {
			return nil, fmt.Errorf("add gocron job: %w", err)
		}
		return j, nil
	}
	if job.Slug == "" {
		return nil, ErrNoSlug
	}
	sched, err := schedspec.Parse(schedule.spec, w.loc)
	if err != nil {
		return nil, fmt.Errorf("add gocron job %s: %w", job.Slug, err)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.jobs[job.Slug]; ok {
		return nil, fmt.Errorf("add gocron job %s: %w", job.Slug, ErrDuplicateSlug)
	}
	task := gocron.NewTask(func(ctx context.Context) error { return w.run(ctx, job, fn) })
	j, err := w.s.NewJob(schedule.def, task, append([]gocron.JobOption{gocron.WithName(job.Slug)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("add gocron job %s: %w", job.Slug, err)
	}
	w.jobs[job.Slug] = j
	w.slugs[j.ID()] = job.Slug
	w.src.Set(job.Spec(sched))
	return j, nil
}

// RemoveJob removes the job from gocron and its monitor from the declared
// set, so the next declaration marks it as no longer discovered.
func (w *Scheduler) RemoveJob(id uuid.UUID) error {
	if err := w.s.RemoveJob(id); err != nil {
		return fmt.Errorf("remove gocron job: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if slug, ok := w.slugs[id]; ok {
		delete(w.slugs, id)
		delete(w.jobs, slug)
		w.src.Remove(slug)
	}
	return nil
}

// Declare sends the declared set once, now. [Scheduler.Start] does this in
// the background; call Declare first to have the ping URLs before the
// first run, at the cost of waiting for Vigil (bounded as on [sdk.Client]).
func (w *Scheduler) Declare(ctx context.Context) error { return w.src.Declare(ctx) }

// Start declares the monitors now and then periodically in the background
// (see [sdk.Source.Run]), until ctx ends or [Scheduler.Shutdown], and
// starts gocron.
func (w *Scheduler) Start(ctx context.Context) {
	loopCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	w.mu.Lock()
	w.stop, w.done = stop, done
	w.mu.Unlock()
	go func() {
		defer close(done)
		w.src.Run(loopCtx)
	}()
	w.s.Start()
}

// Shutdown stops the declaration loop and shuts gocron down, which cancels
// running jobs' contexts and waits for them.
func (w *Scheduler) Shutdown() error {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	if err := w.s.Shutdown(); err != nil {
		return fmt.Errorf("shut gocron down: %w", err)
	}
	return nil
}

// run is one scheduled run of a monitored job. It returns fn's error so
// that gocron's own listeners and monitors see it.
func (w *Scheduler) run(ctx context.Context, job sdk.Job, fn func(ctx context.Context) error) error {
	c := w.src.Client()
	m, ok := w.src.Monitor(job.Slug)
	if !ok {
		c.Logger().WarnContext(ctx, "gocronwrap: monitor not declared yet; run not reported", "slug", job.Slug)
		return fn(ctx)
	}
	opts := job.RunOptions()
	w.mu.Lock()
	j := w.jobs[job.Slug]
	w.mu.Unlock()
	if j != nil {
		if next, err := j.NextRun(); err == nil && !next.IsZero() {
			opts = append(opts, sdk.WithNextOccurrence(next))
		}
		// gocron stamps LastRun when it sends the run out, at its fire time.
		if last, err := j.LastRun(); err == nil && !last.IsZero() {
			opts = append(opts, sdk.WithScheduledAt(last.Truncate(time.Second)))
		}
	}
	return c.RunWithRetries(ctx, m, fn, opts...)
}

// Listeners returns a gocron job option that reports each run of an
// existing job to m through gocron's event listeners: start before it runs,
// success after, fail with the error or the panic. Listeners know no run
// id, so the pings carry none and Vigil closes the oldest open run; prefer
// [Scheduler.NewJob], which ties each start to its finish.
func Listeners(c *sdk.Client, m sdk.Monitor) gocron.JobOption {
	ping := func(kind sdk.Kind, body string) {
		opts := &sdk.PingOptions{}
		if body != "" {
			opts.Body = []byte(body)
		}
		if err := c.Ping(context.Background(), m, kind, opts); err != nil {
			c.Logger().Warn("gocronwrap: ping not delivered", "monitor", m.String(), "kind", string(kind), "error", err)
		}
	}
	return gocron.WithEventListeners(
		gocron.BeforeJobRuns(func(uuid.UUID, string) { ping(sdk.KindStart, "") }),
		gocron.AfterJobRuns(func(uuid.UUID, string) { ping(sdk.KindSuccess, "") }),
		gocron.AfterJobRunsWithError(func(_ uuid.UUID, _ string, err error) { ping(sdk.KindFail, err.Error()) }),
		gocron.AfterJobRunsWithPanic(func(_ uuid.UUID, _ string, p any) { ping(sdk.KindFail, fmt.Sprintf("panic: %v", p)) }),
	)
}
