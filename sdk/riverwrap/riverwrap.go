package riverwrap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/cronwrap"
	"github.com/vigilhq/vigil/sdk/retry"
)

// metadataPeriodicJobID is the metadata key under which River stores the ID
// of the periodic job that inserted a job.
const metadataPeriodicJobID = "river:periodic_job_id"

// ErrNoSlug is returned for a monitored job without a slug.
var ErrNoSlug = errors.New("riverwrap: job has no slug")

// ErrDuplicateSlug is returned for a slug already in use.
var ErrDuplicateSlug = errors.New("riverwrap: slug already added")

// A Schedule is a River periodic schedule together with its description
// for Vigil. Build one with [Cron], [Interval] or [Custom].
type Schedule struct {
	river river.PeriodicSchedule
	vigil *sdk.Schedule
	err   error
}

// Cron is a cron schedule in robfig/cron syntax (5 fields, descriptors,
// "@every", a "CRON_TZ=Zone " prefix), as River's documentation suggests
// for periodic jobs.
func Cron(spec string) Schedule {
	s, d, err := cronwrap.ParseSchedule(spec, false)
	return Schedule{river: s, vigil: d, err: err}
}

// Interval is river.PeriodicInterval(d).
func Interval(d time.Duration) Schedule {
	if d <= 0 {
		return Schedule{err: fmt.Errorf("interval %s: want a positive interval", d)}
	}
	return Schedule{river: river.PeriodicInterval(d), vigil: sdk.Every(d)}
}

// Custom pairs any River schedule with its description for Vigil.
func Custom(s river.PeriodicSchedule, described *sdk.Schedule) Schedule {
	return Schedule{river: s, vigil: described}
}

// A Monitor reports River jobs to Vigil. It is a worker middleware (install
// it in river.Config.Middleware) that reports each attempt of a monitored
// job, and it keeps the monitors of River's periodic jobs declared in an
// [sdk.Source]. It is safe for concurrent use.
//
// A job is monitored when it was inserted by a periodic job made with
// [Monitor.PeriodicJob], or when its kind was given to [Monitor.Watch].
// Other jobs pass through untouched.
type Monitor struct {
	river.MiddlewareDefaults

	src         *sdk.Source
	maxAttempts int
	policy      river.ClientRetryPolicy
	wrapped     bool

	mu       sync.Mutex
	periodic map[string]sdk.Job // periodic job ID → job
	kinds    map[string]sdk.Job // job kind → job
	slugs    map[string]bool
	retries  map[retryKey]retryMemo
}

var _ rivertype.WorkerMiddleware = (*Monitor)(nil)

type retryKey struct {
	id      int64
	attempt int
}

type retryMemo struct {
	at      time.Time
	savedAt time.Time
}

// An Option configures a [Monitor].
type Option func(*Monitor)

// WithMaxAttempts is the client's river.Config.MaxAttempts, declared as
// the retry policy of jobs that name none (default
// river.MaxAttemptsDefault, 25).
func WithMaxAttempts(n int) Option {
	return func(m *Monitor) {
		if n > 0 {
			m.maxAttempts = n
		}
	}
}

// New returns a Monitor declaring into src.
func New(src *sdk.Source, opts ...Option) *Monitor {
	m := &Monitor{
		src: src, maxAttempts: river.MaxAttemptsDefault, policy: &river.DefaultClientRetryPolicy{},
		periodic: map[string]sdk.Job{}, kinds: map[string]sdk.Job{}, slugs: map[string]bool{},
		retries: map[retryKey]retryMemo{},
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

// RetryPolicy wraps the client's retry policy (nil: River's default) so
// that the retry time the Monitor reports is exactly the one River
// schedules. Set river.Config.RetryPolicy to it:
//
//	RetryPolicy: mon.RetryPolicy(nil),
//
// Without it, the Monitor reports the latest time River's default policy
// can pick (the delay plus its 10% jitter), which is still safe: Vigil
// only waits a little longer for the retry. Workers that override
// NextRetry are not seen either way.
func (m *Monitor) RetryPolicy(inner river.ClientRetryPolicy) river.ClientRetryPolicy {
	m.mu.Lock()
	defer m.mu.Unlock()
	if inner != nil {
		m.policy = inner
	}
	m.wrapped = true
	return sharedPolicy{m}
}

// sharedPolicy hands River the retry time the middleware already reported.
type sharedPolicy struct{ m *Monitor }

func (p sharedPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	p.m.mu.Lock()
	defer p.m.mu.Unlock()
	k := retryKey{job.ID, job.Attempt}
	if memo, ok := p.m.retries[k]; ok {
		delete(p.m.retries, k)
		return memo.at
	}
	return p.m.policy.NextRetry(job)
}

// nextRetry is when River will run job again after this failed attempt.
func (m *Monitor) nextRetry(job *rivertype.JobRow, now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.wrapped {
		// River's default policy, as River counts: errors so far + 1,
		// to the fourth power, plus the most jitter it adds.
		n := float64(len(job.Errors) + 1)
		worst := math.Pow(n, 4) * 1.1
		if worst >= (time.Duration(math.MaxInt64) - time.Hour).Seconds() {
			return time.Time{}.Add(time.Duration(math.MaxInt64))
		}
		return now.Add(time.Duration(worst * float64(time.Second)))
	}
	// A memo that River never asked for (a worker with its own NextRetry)
	// must not pile up.
	for k, memo := range m.retries {
		if now.Sub(memo.savedAt) > 10*time.Minute {
			delete(m.retries, k)
		}
	}
	at := m.policy.NextRetry(job)
	m.retries[retryKey{job.ID, job.Attempt}] = retryMemo{at: at, savedAt: now}
	return at
}

// PeriodicJob is river.NewPeriodicJob with a monitor: it declares job's
// monitor with schedule and reports every job the periodic job inserts.
// opts.ID defaults to job.Slug (River needs an ID to mark the jobs it
// inserts). With job.NoMonitor it is a plain periodic job, not declared.
//
// The declared retry policy is job.RetryPolicy, or River's default with the
// Monitor's max attempts ([WithMaxAttempts]).
func (m *Monitor) PeriodicJob(schedule Schedule, job sdk.Job, constructor river.PeriodicJobConstructor, opts *river.PeriodicJobOpts) (*river.PeriodicJob, error) {
	if schedule.err != nil {
		return nil, fmt.Errorf("add periodic job %s: %w", job.Slug, schedule.err)
	}
	o := river.PeriodicJobOpts{}
	if opts != nil {
		o = *opts
	}
	if job.NoMonitor {
		return river.NewPeriodicJob(schedule.river, constructor, &o), nil
	}
	if o.ID == "" {
		o.ID = job.Slug
	}
	if err := m.add(job, schedule.vigil, func() { m.periodic[o.ID] = job }); err != nil {
		return nil, fmt.Errorf("add periodic job %s: %w", job.Slug, err)
	}
	return river.NewPeriodicJob(schedule.river, constructor, &o), nil
}

// Watch monitors every job of kind, such as jobs enqueued by the
// application, under job's monitor (declared without a schedule).
func (m *Monitor) Watch(kind string, job sdk.Job) error {
	if job.NoMonitor {
		return nil
	}
	if err := m.add(job, nil, func() { m.kinds[kind] = job }); err != nil {
		return fmt.Errorf("watch job kind %s: %w", kind, err)
	}
	return nil
}

func (m *Monitor) add(job sdk.Job, schedule *sdk.Schedule, register func()) error {
	if job.Slug == "" {
		return ErrNoSlug
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.slugs[job.Slug] {
		return ErrDuplicateSlug
	}
	m.slugs[job.Slug] = true
	register()
	spec := job.Spec(schedule)
	if spec.RetryPolicy == nil {
		spec.RetryPolicy = sdk.RetrySpec(retry.River{MaxAttempts: m.maxAttempts})
	}
	m.src.Set(spec)
	return nil
}

// Remove stops monitoring slug (a periodic job removed from the client, or
// a kind no longer watched); the next declaration marks it as no longer
// discovered.
func (m *Monitor) Remove(slug string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, j := range m.periodic {
		if j.Slug == slug {
			delete(m.periodic, id)
		}
	}
	for kind, j := range m.kinds {
		if j.Slug == slug {
			delete(m.kinds, kind)
		}
	}
	delete(m.slugs, slug)
	m.src.Remove(slug)
}

// Declare sends the declared set once, now: call it before starting the
// River client to have the ping URLs before the first job runs.
func (m *Monitor) Declare(ctx context.Context) error { return m.src.Declare(ctx) }

// Run declares the monitors now and then periodically until ctx is done
// (see [sdk.Source.Run]). Start it beside the River client.
func (m *Monitor) Run(ctx context.Context) { m.src.Run(ctx) }

// jobFor finds the monitored job a row belongs to.
func (m *Monitor) jobFor(row *rivertype.JobRow) (sdk.Job, bool) {
	var meta map[string]any
	_ = json.Unmarshal(row.Metadata, &meta) // no metadata: not periodic
	id, _ := meta[metadataPeriodicJobID].(string)
	m.mu.Lock()
	defer m.mu.Unlock()
	if j, ok := m.periodic[id]; ok && id != "" {
		return j, true
	}
	j, ok := m.kinds[row.Kind]
	return j, ok
}

// occurrence is the scheduled time of the periodic job's occurrence that
// row runs, sent as scheduled_at with each attempt; zero for a job that no
// periodic job inserted. River keeps a job's scheduled time only until its
// first retry overwrites it, so the occurrence is named by the job's
// creation, which River's periodic enqueuer makes at the scheduled time
// (up to 100 ms early), rounded to the second: the same for every attempt.
func occurrence(row *rivertype.JobRow) time.Time {
	var meta map[string]any
	_ = json.Unmarshal(row.Metadata, &meta)
	if id, _ := meta[metadataPeriodicJobID].(string); id == "" {
		return time.Time{}
	}
	return row.CreatedAt.Round(time.Second)
}

// Work implements rivertype.WorkerMiddleware: it reports the attempt.
//
//   - start, with a fresh run id, attempt = River's attempt and, for a
//     periodic job, scheduled_at = its occurrence, sent in the background
//     so the job does not wait;
//   - success when the job returns nil;
//   - fail with retry_at = River's next scheduled retry when attempts remain
//     (job.Attempt < job.MaxAttempts), so Vigil waits for the retry instead
//     of alerting;
//   - a final fail (no retry_at) on the last attempt, or when the job
//     cancels itself (river.JobCancel) or is cancelled remotely;
//   - cancel when River is stopping and the job returned because of it
//     (River then runs it again without counting the attempt), or when the
//     job snoozes (River runs it again later, attempt not counted);
//   - a panic as a failure like an error, then re-panicked for River.
//
// With the job's RuntimeLimit, its MaxRuntime is the context deadline.
func (m *Monitor) Work(ctx context.Context, row *rivertype.JobRow, doInner func(ctx context.Context) error) error {
	job, ok := m.jobFor(row)
	if !ok {
		return doInner(ctx)
	}
	c := m.src.Client()
	mon, ok := m.src.Monitor(job.Slug)
	if !ok {
		c.Logger().WarnContext(ctx, "riverwrap: monitor not declared yet; attempt not reported", "slug", job.Slug, "job_id", row.ID)
		return doInner(ctx)
	}
	pingCtx := context.WithoutCancel(ctx)
	run := c.Begin(pingCtx, mon, sdk.WithAttempt(row.Attempt), sdk.WithScheduledAt(occurrence(row)))
	report := func(kind sdk.Kind, opts *sdk.PingOptions) {
		if err := run.Ping(pingCtx, kind, opts); err != nil {
			c.Logger().WarnContext(ctx, "riverwrap: ping not delivered", "slug", job.Slug, "kind", string(kind), "job_id", row.ID, "error", err)
		}
	}

	jobCtx := ctx
	if job.RuntimeLimit && job.MaxRuntime > 0 {
		var cancel context.CancelFunc
		jobCtx, cancel = context.WithTimeout(ctx, job.MaxRuntime)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			body := []byte(fmt.Sprintf("panic: %v\n\n%s", p, debug.Stack()))
			report(sdk.KindFail, m.failOptions(row, c.Now(), body))
			panic(p)
		}
	}()
	err := doInner(jobCtx)

	var snooze *rivertype.JobSnoozeError
	var cancelErr *rivertype.JobCancelError
	switch {
	case err == nil:
		report(sdk.KindSuccess, nil)
	case errors.As(err, &snooze):
		report(sdk.KindCancel, &sdk.PingOptions{Body: []byte(fmt.Sprintf("snoozed for %s; River runs it again then", snooze.Duration))})
	case errors.As(err, &cancelErr) || errors.Is(context.Cause(ctx), rivertype.ErrJobCancelledRemotely):
		report(sdk.KindFail, &sdk.PingOptions{Body: []byte(err.Error())})
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		report(sdk.KindCancel, &sdk.PingOptions{Body: []byte(err.Error())})
	default:
		report(sdk.KindFail, m.failOptions(row, c.Now(), []byte(err.Error())))
	}
	return err
}

// failOptions is a fail ping for a failed attempt: with River's retry time
// when attempts remain, final otherwise.
func (m *Monitor) failOptions(row *rivertype.JobRow, now time.Time, body []byte) *sdk.PingOptions {
	opts := &sdk.PingOptions{Body: body}
	if row.Attempt < row.MaxAttempts {
		opts.RetryAt = m.nextRetry(row, now)
	}
	return opts
}
