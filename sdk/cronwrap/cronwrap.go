package cronwrap

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/schedspec"
)

// Wrap returns a cron.JobWrapper that reports each run of the wrapped job
// to m: start with a fresh run id, then success, or fail when the job
// panics, before the panic goes on (so cron.Recover, if chained outside,
// still sees it). robfig/cron jobs return no error; for error reporting,
// retries and declarations use a [Scheduler].
func Wrap(c *sdk.Client, m sdk.Monitor) cron.JobWrapper {
	return func(j cron.Job) cron.Job {
		return cron.FuncJob(func() {
			_ = c.Run(context.Background(), m, func(context.Context) error {
				j.Run()
				return nil
			})
		})
	}
}

// ErrNoSlug is returned by [Scheduler.Add] for a monitored job without a
// slug.
var ErrNoSlug = errors.New("cronwrap: job has no slug")

// ErrDuplicateSlug is returned by [Scheduler.Add] for a slug already in use.
var ErrDuplicateSlug = errors.New("cronwrap: slug already added")

// A Scheduler adds monitored jobs to a robfig/cron Cron and keeps their
// monitors declared in a [sdk.Source].
type Scheduler struct {
	cron *cron.Cron
	src  *sdk.Source

	mu      sync.Mutex
	ctx     context.Context
	entries map[cron.EntryID]string // entry → slug, for monitored jobs
	slugs   map[string]cron.EntryID
	stop    context.CancelFunc
	stopped chan struct{}
}

// New returns a Scheduler that adds jobs to c and declares them in src.
func New(c *cron.Cron, src *sdk.Source) *Scheduler {
	return &Scheduler{
		cron: c, src: src, ctx: context.Background(),
		entries: map[cron.EntryID]string{}, slugs: map[string]cron.EntryID{},
	}
}

// Add schedules fn on spec (as c parses it: 5 fields, or 6 with
// cron.WithSeconds; "CRON_TZ=Zone " prefix; "@daily"; "@every 5m") and
// declares job's monitor with that schedule, unless job.NoMonitor.
//
// Each run is reported with a fresh run id (see [sdk.Client.Run]). With
// job.RetryPolicy, a failed run is retried in place as the policy says
// (reported fail with attempt and retry_in, then the retry), dropping a
// retry that the policy's rules put into the next occurrence. With
// job.RuntimeLimit, job.MaxRuntime is the run's context deadline. The run's
// context ends when the ctx given to [Scheduler.Start] does.
func (s *Scheduler) Add(spec string, job sdk.Job, fn func(ctx context.Context) error) (cron.EntryID, error) {
	if job.NoMonitor {
		id, err := s.cron.AddJob(spec, cron.FuncJob(func() {
			if err := fn(s.context()); err != nil {
				s.src.Client().Logger().Info("cronwrap: unmonitored job failed", "error", err)
			}
		}))
		if err != nil {
			return 0, fmt.Errorf("add cron job: %w", err)
		}
		return id, nil
	}
	if job.Slug == "" {
		return 0, ErrNoSlug
	}
	schedule, err := schedspec.Parse(spec, s.cron.Location())
	if err != nil {
		return 0, fmt.Errorf("add cron job %s: %w", job.Slug, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.slugs[job.Slug]; ok {
		return 0, fmt.Errorf("add cron job %s: %w", job.Slug, ErrDuplicateSlug)
	}
	id, err := s.cron.AddJob(spec, cron.FuncJob(func() { s.run(job, fn) }))
	if err != nil {
		return 0, fmt.Errorf("add cron job %s: %w", job.Slug, err)
	}
	s.entries[id] = job.Slug
	s.slugs[job.Slug] = id
	s.src.Set(job.Spec(schedule))
	return id, nil
}

// Remove unschedules the job and drops its monitor from the declared set,
// so the next declaration marks it as no longer discovered.
func (s *Scheduler) Remove(id cron.EntryID) {
	s.cron.Remove(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if slug, ok := s.entries[id]; ok {
		delete(s.entries, id)
		delete(s.slugs, slug)
		s.src.Remove(slug)
	}
}

// Declare sends the declared set once, now. [Scheduler.Start] does this in
// the background; call Declare first to have the ping URLs before the
// first run, at the cost of waiting for Vigil (bounded as on [sdk.Client]).
func (s *Scheduler) Declare(ctx context.Context) error { return s.src.Declare(ctx) }

// Start declares the monitors now and then periodically (see
// [sdk.Source.Run]) in the background, and starts the cron. Jobs' contexts
// derive from ctx: cancel it to tell running jobs the host is shutting down
// (they are reported as cancelled), then wait on [Scheduler.Stop].
func (s *Scheduler) Start(ctx context.Context) {
	s.mu.Lock()
	s.ctx = ctx
	loopCtx, stop := context.WithCancel(ctx)
	s.stop = stop
	s.stopped = make(chan struct{})
	stopped := s.stopped
	s.mu.Unlock()
	go func() {
		defer close(stopped)
		s.src.Run(loopCtx)
	}()
	s.cron.Start()
}

// Stop stops the cron and the declaration loop. The returned context is
// done when running jobs have finished.
func (s *Scheduler) Stop() context.Context {
	s.mu.Lock()
	stop, stopped := s.stop, s.stopped
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
	return s.cron.Stop()
}

func (s *Scheduler) context() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctx
}

// run is one scheduled run of a monitored job.
func (s *Scheduler) run(job sdk.Job, fn func(ctx context.Context) error) {
	s.mu.Lock()
	ctx, id := s.ctx, s.slugs[job.Slug]
	s.mu.Unlock()
	c := s.src.Client()
	m, ok := s.src.Monitor(job.Slug)
	if !ok {
		c.Logger().WarnContext(ctx, "cronwrap: monitor not declared yet; run not reported", "slug", job.Slug)
		if err := fn(ctx); err != nil {
			c.Logger().InfoContext(ctx, "cronwrap: job failed", "slug", job.Slug, "error", err)
		}
		return
	}
	opts := job.RunOptions()
	if e := s.cron.Entry(id); e.Valid() {
		opts = append(opts, sdk.WithNextOccurrence(e.Schedule.Next(c.Now())))
		// robfig/cron sets Prev to the activation time it started this run for.
		if !e.Prev.IsZero() {
			opts = append(opts, sdk.WithScheduledAt(e.Prev))
		}
	}
	if err := c.RunWithRetries(ctx, m, fn, opts...); err != nil {
		c.Logger().InfoContext(ctx, "cronwrap: job failed", "slug", job.Slug, "error", err)
	}
}

// ParseSchedule parses spec as robfig/cron does (5 fields, or 6 with
// seconds first when withSeconds; descriptors; "@every"; a "CRON_TZ=Zone "
// prefix) and describes it for a declaration. Other integrations use it
// to schedule with cron syntax; the returned cron.Schedule satisfies
// river.PeriodicSchedule.
func ParseSchedule(spec string, withSeconds bool) (cron.Schedule, *sdk.Schedule, error) {
	fields := cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor
	if withSeconds {
		fields |= cron.Second
	}
	s, err := cron.NewParser(fields).Parse(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("parse cron spec %q: %w", spec, err)
	}
	described, err := schedspec.Parse(spec, time.UTC)
	if err != nil {
		return nil, nil, err
	}
	return s, described, nil
}
