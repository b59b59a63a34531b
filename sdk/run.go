package sdk

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/vigilhq/vigil/sdk/retry"
)

// ErrorBodyLimit bounds the error text that [Client.Run] sends as the body
// of a fail ping.
const ErrorBodyLimit = 10 << 10

// A Run is one run of a monitored job, tied together by its run id. It is
// returned by [Client.Start]; its methods send the finishing ping with the
// run id, the attempt and the measured duration. A Run is safe for
// concurrent use, but a run is meant to be finished once.
type Run struct {
	c       *Client
	m       Monitor
	rid     string
	attempt int
	// scheduled is the occurrence the run belongs to; zero when not known.
	scheduled time.Time
	started   time.Time
	// startSent is closed once the start ping was delivered or given up on,
	// so that no finish can overtake its start.
	startSent chan struct{}
}

// ID is the run id sent with every ping of the run.
func (r *Run) ID() string { return r.rid }

// Attempt is the attempt number sent with every ping of the run (0: none).
func (r *Run) Attempt() int { return r.attempt }

// ScheduledAt is the occurrence sent with every ping of the run (the zero
// time: none). See [WithScheduledAt].
func (r *Run) ScheduledAt() time.Time { return r.scheduled }

// Monitor is the monitor the run reports to.
func (r *Run) Monitor() Monitor { return r.m }

// Start sends a start ping with a fresh run id and returns the run. Of the
// options, only [WithAttempt] and [WithScheduledAt] apply. The start ping is sent before Start
// returns; an error means only that Vigil did not get it, and the returned
// Run is usable all the same: job code should log the error and go on.
func (c *Client) Start(ctx context.Context, m Monitor, opts ...RunOption) (*Run, error) {
	cfg := newRunConfig(opts)
	r := c.newRun(m, &cfg)
	defer close(r.startSent)
	err := c.Ping(ctx, m, KindStart, r.startOptions())
	return r, err
}

func (c *Client) newRun(m Monitor, cfg *runConfig) *Run {
	return &Run{c: c, m: m, rid: NewRunID(), attempt: cfg.attempt, scheduled: cfg.scheduled, started: c.now(),
		startSent: make(chan struct{})}
}

func (r *Run) startOptions() *PingOptions {
	return &PingOptions{RID: r.rid, Attempt: r.attempt, ScheduledAt: r.scheduled}
}

// Begin is [Client.Start] without the wait: the start ping is sent in the
// background, so that the job starts at once, and the run's finishing pings
// wait for it, so that no finish overtakes its start. A start that cannot
// be delivered is logged. ctx bounds the start ping (pass
// context.WithoutCancel(ctx) for one that must outlive a shutdown). Of the
// options, only [WithAttempt] and [WithScheduledAt] apply.
func (c *Client) Begin(ctx context.Context, m Monitor, opts ...RunOption) *Run {
	cfg := newRunConfig(opts)
	r := c.newRun(m, &cfg)
	go func() {
		defer close(r.startSent)
		err := c.Ping(ctx, m, KindStart, r.startOptions())
		if err != nil {
			c.logger.WarnContext(ctx, "vigil: start ping not delivered", "monitor", m.String(), "rid", r.rid, "error", err)
		}
	}()
	return r
}

// Ping sends a ping of kind for the run. RID, Attempt and ScheduledAt
// default to the run's, and DurationMS, on a finishing kind, to the time
// since the start.
func (r *Run) Ping(ctx context.Context, kind Kind, opts *PingOptions) error {
	o := PingOptions{}
	if opts != nil {
		o = *opts
	}
	if o.RID == "" {
		o.RID = r.rid
	}
	if o.Attempt == 0 {
		o.Attempt = r.attempt
	}
	if o.ScheduledAt.IsZero() {
		o.ScheduledAt = r.scheduled
	}
	if o.DurationMS == 0 && kind != KindLog && kind != KindStart {
		o.DurationMS = max(r.c.now().Sub(r.started).Milliseconds(), 1)
	}
	select {
	case <-r.startSent:
	case <-ctx.Done():
		return fmt.Errorf("ping %s: wait for the start ping: %w", kind, context.Cause(ctx))
	}
	return r.c.Ping(ctx, r.m, kind, &o)
}

// Success reports that the run succeeded.
func (r *Run) Success(ctx context.Context) error {
	return r.Ping(ctx, KindSuccess, nil)
}

// Fail reports that the run failed for good: no retry is coming.
func (r *Run) Fail(ctx context.Context, reason string) error {
	return r.Ping(ctx, KindFail, &PingOptions{Body: []byte(reason)})
}

// Retry reports that this attempt failed and that the scheduler will run
// the occurrence again after delay. Vigil does not alert for it (unless the
// monitor says every_attempt) and expects the retry.
func (r *Run) Retry(ctx context.Context, reason string, delay time.Duration) error {
	return r.Ping(ctx, KindFail, &PingOptions{Body: []byte(reason), RetryIn: max(delay, time.Second)})
}

// RetryAt is [Run.Retry] with the instant of the retry.
func (r *Run) RetryAt(ctx context.Context, reason string, at time.Time) error {
	return r.Ping(ctx, KindFail, &PingOptions{Body: []byte(reason), RetryAt: at})
}

// Cancel reports that the run was interrupted by its host (a shutdown, a
// deploy) and will not finish: neither a success nor a failure.
func (r *Run) Cancel(ctx context.Context, reason string) error {
	return r.Ping(ctx, KindCancel, &PingOptions{Body: []byte(reason)})
}

// Log attaches a message to the run without changing its state.
func (r *Run) Log(ctx context.Context, message string) error {
	return r.Ping(ctx, KindLog, &PingOptions{Body: []byte(message)})
}

// Exit reports the run's exit status (0 success, else failure) with its
// output.
func (r *Run) Exit(ctx context.Context, code int, output []byte) error {
	return r.Ping(ctx, KindExit, &PingOptions{ExitCode: code, Body: output})
}

// A RunOption configures [Client.Run], [Client.RunWithRetries] and
// [Client.Start].
type RunOption func(*runConfig)

type runConfig struct {
	attempt      int
	policy       retry.Policy
	runtimeLimit time.Duration
	next         time.Time
	scheduled    time.Time
	rnd          retry.Rand
}

func newRunConfig(opts []RunOption) runConfig {
	cfg := runConfig{attempt: 1}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// WithAttempt sets the number of this execution of the occurrence: 1 (the
// default) for the first, 2 for the first retry, and so on. Use it when the
// scheduler retries the job and says which attempt this is. With
// [Client.Start] and [Client.Begin], 0 sends no attempt at all.
func WithAttempt(n int) RunOption {
	return func(c *runConfig) { c.attempt = max(n, 0) }
}

// WithScheduledAt names the occurrence the run belongs to: the time the
// schedule fired it, which every retry of it keeps. Vigil then keeps each
// occurrence's retry chain, and its deadline, apart from the others'. A
// scheduler integration sets it from its scheduler; without it, Vigil
// takes a run for the occurrence its pings' time falls in.
func WithScheduledAt(t time.Time) RunOption {
	return func(c *runConfig) { c.scheduled = t }
}

// WithRetryPolicy says how the job's scheduler retries it. A failed attempt
// that the policy will retry is reported as a fail with retry_in; only a
// failure that it will not retry is final.
func WithRetryPolicy(p retry.Policy) RunOption {
	return func(c *runConfig) { c.policy = p }
}

// WithRuntimeLimit gives the job's context a deadline d after the start, so
// that a job that honours its context cannot run past its max runtime. A
// job stopped by it is reported as failed.
func WithRuntimeLimit(d time.Duration) RunOption {
	return func(c *runConfig) { c.runtimeLimit = d }
}

// WithNextOccurrence tells the retry policy when the schedule fires next,
// for policies that drop a retry that would run into it
// ([retry.OccurrenceBounded], Quartz's rule).
func WithNextOccurrence(t time.Time) RunOption {
	return func(c *runConfig) { c.next = t }
}

// WithRand sets the randomness of the retry policy's jitter (default
// math/rand/v2's global source), so that tests know the exact retry_in.
func WithRand(r retry.Rand) RunOption {
	return func(c *runConfig) { c.rnd = r }
}

// attemptResult is the outcome of one reported attempt.
type attemptResult struct {
	err   error
	retry bool
	delay time.Duration
}

// Run runs fn as one monitored run of m and returns fn's error unchanged.
//
// It sends start with a fresh run id in the background, so that the job
// starts at once, then, after fn returns and after the start was sent:
//
//   - success, with duration_ms, when fn returns nil;
//   - cancel, when fn returned because ctx was cancelled (the host is
//     shutting down: ctx.Err() != nil and the error is or wraps
//     context.Canceled), never fail;
//   - fail with attempt and retry_in, when the retry policy
//     ([WithRetryPolicy]) will run the occurrence again;
//   - fail without retry_in (final) otherwise, or when the error was marked
//     [Permanent]. The error text is the ping's body.
//
// A panic in fn is reported as a final fail, with its stack, and re-panicked.
//
// Vigil's failures are logged, never returned: a down Vigil delays Run's
// return by at most the worst case of two pings (see [Client]), and the job
// itself by nothing.
func (c *Client) Run(ctx context.Context, m Monitor, fn func(ctx context.Context) error, opts ...RunOption) error {
	cfg := newRunConfig(opts)
	return c.runAttempt(ctx, m, fn, &cfg, max(cfg.attempt, 1)).err
}

// RunWithRetries runs fn like [Client.Run], and retries it itself as the
// retry policy ([WithRetryPolicy]) says: it waits each delay with the
// client's sleep function ([WithSleepFunc]) and runs fn again with the next
// attempt number. Each failed attempt that will be retried is reported as a
// fail with attempt=n and retry_in; the last failure is final. It returns
// nil on the first success, the last error otherwise, and, when ctx ends
// during a wait, that error joined with ctx's cause. Without a policy it
// runs fn once.
func (c *Client) RunWithRetries(ctx context.Context, m Monitor, fn func(ctx context.Context) error, opts ...RunOption) error {
	cfg := newRunConfig(opts)
	for attempt := max(cfg.attempt, 1); ; attempt++ {
		res := c.runAttempt(ctx, m, fn, &cfg, attempt)
		if !res.retry {
			return res.err
		}
		if err := c.sleep(ctx, res.delay); err != nil {
			c.logger.InfoContext(ctx, "vigil: retry abandoned", "monitor", m.String(), "attempt", attempt, "error", err)
			return errors.Join(res.err, err)
		}
	}
}

func (c *Client) runAttempt(ctx context.Context, m Monitor, fn func(ctx context.Context) error, cfg *runConfig, attempt int) (res attemptResult) {
	// Pings outlive a cancelled ctx: a shutdown is exactly when the cancel
	// report matters. Each ping is still bounded by the client's timeouts.
	pingCtx := context.WithoutCancel(ctx)
	run := c.Begin(pingCtx, m, WithAttempt(attempt), WithScheduledAt(cfg.scheduled))

	jobCtx := ctx
	if cfg.runtimeLimit > 0 {
		var cancel context.CancelFunc
		jobCtx, cancel = context.WithTimeout(ctx, cfg.runtimeLimit)
		defer cancel()
	}

	defer func() {
		if p := recover(); p != nil {
			body := fmt.Sprintf("panic: %v\n\n%s", p, debug.Stack())
			c.report(pingCtx, run, KindFail, &PingOptions{Body: []byte(body)})
			panic(p)
		}
	}()
	err := fn(jobCtx)

	switch {
	case err == nil:
		c.report(pingCtx, run, KindSuccess, nil)
		return attemptResult{}
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		c.report(pingCtx, run, KindCancel, &PingOptions{Body: errorBody(err)})
		return attemptResult{err: err}
	}
	delay, again := c.retryDelay(cfg, attempt, err)
	if again {
		retryIn := max(delay, time.Second)
		c.report(pingCtx, run, KindFail, &PingOptions{Body: errorBody(err), RetryIn: retryIn})
		return attemptResult{err: err, retry: true, delay: delay}
	}
	c.report(pingCtx, run, KindFail, &PingOptions{Body: errorBody(err)})
	return attemptResult{err: err}
}

// retryDelay asks the policy whether failed attempt will be retried.
func (c *Client) retryDelay(cfg *runConfig, attempt int, err error) (time.Duration, bool) {
	if cfg.policy == nil || IsPermanent(err) {
		return 0, false
	}
	rnd := cfg.rnd // nil: the policy draws from math/rand/v2
	if b, ok := cfg.policy.(retry.OccurrenceBounded); ok && !cfg.next.IsZero() {
		return b.DelayBefore(attempt, rnd, c.now(), cfg.next)
	}
	return cfg.policy.Delay(attempt, rnd)
}

// report sends a finishing ping for run and logs, never returns, a failure.
func (c *Client) report(ctx context.Context, run *Run, kind Kind, opts *PingOptions) {
	if err := run.Ping(ctx, kind, opts); err != nil {
		c.logger.WarnContext(ctx, "vigil: ping not delivered", "monitor", run.m.String(), "kind", string(kind), "rid", run.rid, "error", err)
	}
}

// errorBody is the text of err, cut at ErrorBodyLimit.
func errorBody(err error) []byte {
	s := err.Error()
	if len(s) > ErrorBodyLimit {
		s = s[:ErrorBodyLimit]
	}
	return []byte(s)
}
