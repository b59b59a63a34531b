package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// clock is an injected clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type testBundle struct {
	srv    *vigiltest.Server
	client *sdk.Client
	clock  *clock
	sleeps *vigiltest.Sleeps
	log    *vigiltest.Log
	key    string
}

func setup(t *testing.T, opts ...sdk.Option) *testBundle {
	t.Helper()
	b := &testBundle{srv: vigiltest.New(t), clock: newClock(), sleeps: &vigiltest.Sleeps{}, log: vigiltest.NewLog(t)}
	b.key = b.srv.AddMonitor()
	b.client = sdk.New(b.srv.URL(), append([]sdk.Option{
		sdk.WithAPIKey(vigiltest.APIKey),
		sdk.WithNowFunc(b.clock.Now),
		sdk.WithSleepFunc(b.sleeps.Sleep),
		sdk.WithLogger(slog.New(slog.NewTextHandler(b.log, nil))),
	}, opts...)...)
	return b
}

// summary renders pings compactly for exact comparisons.
func summary(pings []vigiltest.Ping) []string {
	out := make([]string, len(pings))
	for i, p := range pings {
		s := p.Kind
		if p.ExitCode != nil {
			s = fmt.Sprintf("exit %d", *p.ExitCode)
		}
		for _, name := range []string{"attempt", "retry_in", "retry_at"} {
			if v := p.Query.Get(name); v != "" {
				s += " " + name + "=" + v
			}
		}
		out[i] = s
	}
	return out
}

func TestPingPaths(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.srv.AddSlug("nightly-import")
	m := sdk.Key(b.key)
	retryAt := time.Date(2026, 3, 1, 3, 4, 5, 500_000_000, time.FixedZone("CET", 3600))

	calls := []struct {
		m    sdk.Monitor
		kind sdk.Kind
		opts *sdk.PingOptions
		path string
		q    string
	}{
		{m, sdk.KindStart, &sdk.PingOptions{RID: "r1", Attempt: 1}, "/ping/" + b.key + "/start", "attempt=1&rid=r1"},
		{m, sdk.KindSuccess, &sdk.PingOptions{RID: "r1", DurationMS: 1234}, "/ping/" + b.key, "duration_ms=1234&rid=r1"},
		{m, sdk.KindFail, &sdk.PingOptions{Attempt: 2, RetryIn: 1500 * time.Millisecond}, "/ping/" + b.key + "/fail", "attempt=2&retry_in=2"},
		{m, sdk.KindFail, &sdk.PingOptions{RetryAt: retryAt}, "/ping/" + b.key + "/fail", "retry_at=2026-03-01T02%3A04%3A06Z"},
		{m, sdk.KindLog, nil, "/ping/" + b.key + "/log", ""},
		{m, sdk.KindSkip, nil, "/ping/" + b.key + "/skip", ""},
		{m, sdk.KindCancel, nil, "/ping/" + b.key + "/cancel", ""},
		{m, sdk.KindExit, &sdk.PingOptions{ExitCode: 0}, "/ping/" + b.key + "/0", ""},
		{m, sdk.KindExit, &sdk.PingOptions{ExitCode: 137, RID: "r2"}, "/ping/" + b.key + "/137", "rid=r2"},
		{sdk.Slug(b.srv.ProjectKey(), "nightly-import"), sdk.KindStart, nil, "/ping/" + b.srv.ProjectKey() + "/nightly-import/start", ""},
		{sdk.Slug(b.srv.ProjectKey(), "nightly-import"), sdk.KindSuccess, nil, "/ping/" + b.srv.ProjectKey() + "/nightly-import", ""},
		{sdk.Slug(b.srv.ProjectKey(), "new-job").WithCreate(), sdk.KindFail, nil, "/ping/" + b.srv.ProjectKey() + "/new-job/fail", "create=1"},
		{sdk.PingURL(b.srv.URL() + "/ping/" + b.key + "/"), sdk.KindStart, nil, "/ping/" + b.key + "/start", ""},
	}
	for _, c := range calls {
		require.NoError(t, b.client.Ping(ctx, c.m, c.kind, c.opts), c.path)
	}
	pings := b.srv.Pings()
	require.Len(t, pings, len(calls))
	for i, c := range calls {
		require.Equal(t, "POST", pings[i].Method)
		require.Equal(t, c.path, pings[i].Path)
		require.Equal(t, c.q, pings[i].Query.Encode(), c.path)
	}
	require.Equal(t, http.StatusCreated, pings[11].Status)
	require.Equal(t, http.StatusOK, pings[12].Status)
}

func TestPingBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.client.Ping(context.Background(), sdk.Key(b.key), sdk.KindLog, &sdk.PingOptions{Body: []byte("hello")}))
	long := strings.Repeat("a", sdk.BodyLimit) + "END"
	require.NoError(t, b.client.Ping(context.Background(), sdk.Key(b.key), sdk.KindFail, &sdk.PingOptions{Body: []byte(long)}))
	pings := b.srv.Pings()
	require.Equal(t, "hello", pings[0].Body)
	require.Len(t, pings[1].Body, sdk.BodyLimit)
	require.True(t, strings.HasSuffix(pings[1].Body, "END"), "the end of the output is kept")
}

func TestPingInvalidSendsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, err := range []error{
		b.client.Ping(ctx, sdk.Monitor{}, sdk.KindStart, nil),
		b.client.Ping(ctx, sdk.Key(b.key), sdk.Kind("finish"), nil),
		b.client.Ping(ctx, sdk.Key(b.key), sdk.KindExit, &sdk.PingOptions{ExitCode: 256}),
		b.client.Ping(ctx, sdk.Key(b.key), sdk.KindExit, &sdk.PingOptions{ExitCode: -1}),
		b.client.Ping(ctx, sdk.Key(b.key), sdk.KindStart, &sdk.PingOptions{RID: strings.Repeat("x", 65)}),
		sdk.New("not a url").Ping(ctx, sdk.Key(b.key), sdk.KindStart, nil),
		b.client.Ping(ctx, sdk.PingURL("ftp://x/ping/k"), sdk.KindStart, nil),
	} {
		require.ErrorIs(t, err, sdk.ErrInvalid)
	}
	require.Empty(t, b.srv.Pings())
}

func TestPingErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	unknown := "3a1c2d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"

	err := b.client.Ping(ctx, sdk.Key(unknown), sdk.KindStart, nil)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.NotContains(t, err.Error(), unknown, "ping keys never appear in errors")

	err = b.client.Ping(ctx, sdk.Slug("wrong", "x"), sdk.KindStart, nil)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.NotContains(t, err.Error(), "wrong")

	b.srv.FailNext(http.StatusBadRequest)
	require.ErrorIs(t, b.client.Ping(ctx, sdk.Key(b.key), sdk.KindStart, nil), sdk.ErrBadRequest)
	require.Empty(t, b.sleeps.Waits(), "a 4xx is not retried")
}

func TestPingRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	b.srv.FailNext(http.StatusServiceUnavailable, http.StatusBadGateway)
	require.NoError(t, b.client.Ping(ctx, sdk.Key(b.key), sdk.KindStart, nil))
	require.Equal(t, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond}, b.sleeps.Waits())
	require.Len(t, b.srv.Pings(), 1)

	// Three 5xx: the default two retries are spent.
	b.srv.FailNext(500, 500, 500)
	require.ErrorIs(t, b.client.Ping(ctx, sdk.Key(b.key), sdk.KindStart, nil), sdk.ErrUnavailable)

	// A 429 waits its Retry-After (1 s).
	b.srv.FailNext(http.StatusTooManyRequests)
	require.NoError(t, b.client.Ping(ctx, sdk.Key(b.key), sdk.KindStart, nil))
	require.Equal(t, time.Second, b.sleeps.Waits()[4])

	// WithRetries(0) sends once.
	c := sdk.New(b.srv.URL(), sdk.WithRetries(0), sdk.WithSleepFunc(b.sleeps.Sleep))
	b.srv.FailNext(500)
	require.ErrorIs(t, c.Ping(ctx, sdk.Key(b.key), sdk.KindStart, nil), sdk.ErrUnavailable)
	require.Len(t, b.sleeps.Waits(), 5)
}

func TestPingTimeoutIsBounded(t *testing.T) {
	t.Parallel()
	b := setup(t, sdk.WithTimeout(50*time.Millisecond), sdk.WithRetries(1))
	release := make(chan struct{})
	b.srv.OnRequest(func(r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	start := time.Now()
	err := b.client.Ping(context.Background(), sdk.Key(b.key), sdk.KindStart, nil)
	require.ErrorIs(t, err, sdk.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 2*time.Second)
}

func TestStartAndFinish(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	run, err := b.client.Start(ctx, sdk.Key(b.key), sdk.WithAttempt(2))
	require.NoError(t, err)
	require.Regexp(t, uuidV4, run.ID())
	b.clock.Advance(1500 * time.Millisecond)
	require.NoError(t, run.Log(ctx, "halfway"))
	require.NoError(t, run.Retry(ctx, "boom", 30*time.Second))

	pings := b.srv.Pings()
	require.Equal(t, []string{"start attempt=2", "log attempt=2", "fail attempt=2 retry_in=30"}, summary(pings))
	for _, p := range pings {
		require.Equal(t, run.ID(), p.RID())
	}
	require.Equal(t, "", pings[1].DurationMS(), "a log is not a finish")
	require.Equal(t, "1500", pings[2].DurationMS())
	require.Equal(t, "boom", pings[2].Body)

	other, err := b.client.Start(ctx, sdk.Key(b.key))
	require.NoError(t, err)
	require.NotEqual(t, run.ID(), other.ID(), "each run has a fresh id")
	require.NoError(t, other.Exit(ctx, 3, []byte("out")))
	require.Equal(t, "exit 3 attempt=1", summary(b.srv.Pings())[4])
}

func TestStartReturnsUsableRunWhenVigilIsDown(t *testing.T) {
	t.Parallel()
	c := sdk.New(vigiltest.ClosedURL(t), sdk.WithSleepFunc((&vigiltest.Sleeps{}).Sleep))
	run, err := c.Start(context.Background(), sdk.Key("3a1c2d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"))
	require.ErrorIs(t, err, sdk.ErrUnavailable)
	require.NotNil(t, run)
	require.ErrorIs(t, run.Success(context.Background()), sdk.ErrUnavailable)
}

func TestRunSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ran := false
	err := b.client.Run(context.Background(), sdk.Key(b.key), func(ctx context.Context) error {
		ran = true
		b.clock.Advance(2 * time.Second)
		return nil
	})
	require.NoError(t, err)
	require.True(t, ran)
	pings := b.srv.Pings()
	require.Equal(t, []string{"start attempt=1", "success attempt=1"}, summary(pings))
	require.Regexp(t, uuidV4, pings[0].RID())
	require.Equal(t, pings[0].RID(), pings[1].RID())
	require.Equal(t, "2000", pings[1].DurationMS())
	require.Equal(t, "", pings[0].DurationMS())
}

func TestRunFailureIsFinalWithoutPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	jobErr := errors.New("connect to db: refused")
	err := b.client.Run(context.Background(), sdk.Key(b.key), func(context.Context) error { return jobErr })
	require.ErrorIs(t, err, jobErr, "the job's error is returned unchanged")
	pings := b.srv.Pings()
	require.Equal(t, []string{"start attempt=1", "fail attempt=1"}, summary(pings))
	require.Equal(t, "connect to db: refused", pings[1].Body)
	require.Equal(t, pings[0].RID(), pings[1].RID())
}

func TestRunReportsRetryFromPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	policy := retry.QuartzFixed{MaxAttempts: 2, Interval: 5 * time.Minute}
	fail := func(context.Context) error { return errors.New("flaky") }

	_ = b.client.Run(ctx, sdk.Key(b.key), fail, sdk.WithRetryPolicy(policy))
	_ = b.client.Run(ctx, sdk.Key(b.key), fail, sdk.WithRetryPolicy(policy), sdk.WithAttempt(2))
	_ = b.client.Run(ctx, sdk.Key(b.key), fail, sdk.WithRetryPolicy(policy), sdk.WithAttempt(3))
	// Permanent errors are final at once, and still match with errors.Is.
	perm := sdk.Permanent(errors.New("bad input"))
	err := b.client.Run(ctx, sdk.Key(b.key), func(context.Context) error { return perm }, sdk.WithRetryPolicy(policy))
	require.True(t, sdk.IsPermanent(err))
	require.Equal(t, []string{
		"start attempt=1", "fail attempt=1 retry_in=300",
		"start attempt=2", "fail attempt=2 retry_in=300",
		"start attempt=3", "fail attempt=3",
		"start attempt=1", "fail attempt=1",
	}, summary(b.srv.Pings()))
	require.Empty(t, b.sleeps.Waits(), "Run does not wait for retries")
}

func TestRunQuartzRetryDroppedBeforeNextOccurrence(t *testing.T) {
	t.Parallel()
	b := setup(t)
	next := b.clock.Now().Add(time.Hour)
	fail := func(context.Context) error { return errors.New("flaky") }
	_ = b.client.Run(context.Background(), sdk.Key(b.key), fail,
		sdk.WithRetryPolicy(retry.QuartzFixed{MaxAttempts: 3, Interval: 90 * time.Minute}), sdk.WithNextOccurrence(next))
	_ = b.client.Run(context.Background(), sdk.Key(b.key), fail,
		sdk.WithRetryPolicy(retry.QuartzFixed{MaxAttempts: 3, Interval: 30 * time.Minute}), sdk.WithNextOccurrence(next))
	require.Equal(t, []string{"start attempt=1", "fail attempt=1", "start attempt=1", "fail attempt=1 retry_in=1800"}, summary(b.srv.Pings()))
}

func TestRunWithRetriesFailTwiceThenSucceed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	calls := 0
	err := b.client.RunWithRetries(context.Background(), sdk.Key(b.key), func(ctx context.Context) error {
		calls++
		if calls < 3 {
			return fmt.Errorf("attempt %d failed", calls)
		}
		return nil
	}, sdk.WithRetryPolicy(retry.HangfireDefault()), sdk.WithRand(fixedRand{}))
	require.NoError(t, err)
	require.Equal(t, 3, calls)
	// Hangfire's formula with r = 0: 15 s before retry 1, 16 s before retry 2.
	require.Equal(t, []string{
		"start attempt=1", "fail attempt=1 retry_in=15",
		"start attempt=2", "fail attempt=2 retry_in=16",
		"start attempt=3", "success attempt=3",
	}, summary(b.srv.Pings()))
	require.Equal(t, []time.Duration{15 * time.Second, 16 * time.Second}, b.sleeps.Waits())
	pings := b.srv.Pings()
	require.NotEqual(t, pings[0].RID(), pings[2].RID(), "each attempt is its own run")
	require.Equal(t, "attempt 2 failed", pings[3].Body)
}

func TestRunWithRetriesFinalFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	policy := retry.Hangfire{Attempts: 2, DelaysInSeconds: []int{60}}
	err := b.client.RunWithRetries(context.Background(), sdk.Key(b.key), func(context.Context) error {
		return errors.New("down")
	}, sdk.WithRetryPolicy(policy))
	require.EqualError(t, err, "down")
	require.Equal(t, []string{
		"start attempt=1", "fail attempt=1 retry_in=60",
		"start attempt=2", "fail attempt=2 retry_in=60",
		"start attempt=3", "fail attempt=3",
	}, summary(b.srv.Pings()))
	require.Equal(t, []time.Duration{time.Minute, time.Minute}, b.sleeps.Waits())

	// A permanent error stops the chain at once.
	err = b.client.RunWithRetries(context.Background(), sdk.Key(b.key), func(context.Context) error {
		return sdk.Permanent(errors.New("invalid"))
	}, sdk.WithRetryPolicy(policy))
	require.EqualError(t, err, "invalid")
	require.Equal(t, "fail attempt=1", summary(b.srv.Pings())[7])
}

func TestRunWithRetriesStopsWhenContextEndsDuringWait(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	b := setup(t, sdk.WithSleepFunc(func(ctx context.Context, d time.Duration) error {
		cancel() // the host shuts down while the retry waits
		return ctx.Err()
	}))
	calls := 0
	err := b.client.RunWithRetries(ctx, sdk.Key(b.key), func(context.Context) error {
		calls++
		return errors.New("down")
	}, sdk.WithRetryPolicy(retry.QuartzFixed{MaxAttempts: 3, Interval: time.Minute}))
	require.Equal(t, 1, calls)
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, err.Error(), "down")
}

type fixedRand struct{}

func (fixedRand) IntN(int) int     { return 0 }
func (fixedRand) Float64() float64 { return 0.5 }

func TestRunPanicReportsFailAndRepanics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.PanicsWithValue(t, "boom", func() {
		_ = b.client.Run(context.Background(), sdk.Key(b.key), func(context.Context) error { panic("boom") },
			sdk.WithRetryPolicy(retry.HangfireDefault()))
	})
	pings := b.srv.Pings()
	require.Equal(t, []string{"start attempt=1", "fail attempt=1"}, summary(pings))
	require.True(t, strings.HasPrefix(pings[1].Body, "panic: boom"), pings[1].Body)
	require.Contains(t, pings[1].Body, "goroutine", "the stack is attached")
}

func TestRunShutdownReportsCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := b.client.Run(ctx, sdk.Key(b.key), func(ctx context.Context) error {
		cancel() // the host shuts down mid-run
		<-ctx.Done()
		return fmt.Errorf("copy rows: %w", ctx.Err())
	}, sdk.WithRetryPolicy(retry.HangfireDefault()))
	require.ErrorIs(t, err, context.Canceled)
	pings := b.srv.Pings()
	require.Equal(t, []string{"start attempt=1", "cancel attempt=1"}, summary(pings), "a shutdown is never a failure")
	require.Equal(t, "copy rows: context canceled", pings[1].Body)

	// A job that returns context.Canceled of its own while ctx is alive
	// failed.
	_ = b.client.Run(context.Background(), sdk.Key(b.key), func(ctx context.Context) error { return context.Canceled })
	require.Equal(t, "fail attempt=1", summary(b.srv.Pings())[3])
}

func TestRunRuntimeLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	err := b.client.Run(context.Background(), sdk.Key(b.key), func(ctx context.Context) error {
		deadline, ok := ctx.Deadline()
		require.True(t, ok)
		require.WithinDuration(t, time.Now().Add(time.Hour), deadline, time.Minute)
		return nil
	}, sdk.WithRuntimeLimit(time.Hour))
	require.NoError(t, err)

	// A job stopped by its runtime limit failed (it was not a shutdown).
	err = b.client.Run(context.Background(), sdk.Key(b.key), func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}, sdk.WithRuntimeLimit(time.Nanosecond))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, "fail attempt=1", summary(b.srv.Pings())[3])

	_ = b.client.Run(context.Background(), sdk.Key(b.key), func(ctx context.Context) error {
		_, ok := ctx.Deadline()
		require.False(t, ok, "no deadline unless asked for")
		return nil
	})
}

func TestRunStartDoesNotDelayJobAndPrecedesFinish(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	jobRan := make(chan struct{})
	b.srv.OnRequest(func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/start") {
			<-jobRan // the start is held until the job has run
			<-release
		}
	})
	done := make(chan error)
	go func() {
		done <- b.client.Run(context.Background(), sdk.Key(b.key), func(context.Context) error {
			close(jobRan)
			return nil
		})
	}()
	<-jobRan // the job ran while Vigil was still answering the start
	select {
	case <-done:
		t.Fatal("Run returned before its start ping was answered")
	default:
	}
	close(release)
	require.NoError(t, <-done)
	require.Equal(t, []string{"start attempt=1", "success attempt=1"}, summary(b.srv.Pings()))
}

func TestRunWhenVigilIsUnreachable(t *testing.T) {
	t.Parallel()
	log := vigiltest.NewLog(t)
	sleeps := &vigiltest.Sleeps{}
	c := sdk.New(vigiltest.ClosedURL(t), sdk.WithSleepFunc(sleeps.Sleep), sdk.WithLogger(slog.New(slog.NewTextHandler(log, nil))))
	ran := false
	start := time.Now()
	err := c.Run(context.Background(), sdk.Key("3a1c2d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"), func(context.Context) error {
		ran = true
		return nil
	})
	require.NoError(t, err, "Vigil's failures are not the job's")
	require.True(t, ran)
	require.Less(t, time.Since(start), 2*time.Second)
	// Two pings, each tried three times with 250 ms and 500 ms between.
	require.Equal(t, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond}, sleeps.Waits())
	require.Contains(t, log.String(), "start ping not delivered")
	require.Contains(t, log.String(), "ping not delivered")
	require.NotContains(t, log.String(), "3a1c2d4e-5f60", "ping keys never appear in logs")

	// The job's own error still comes back as it was.
	jobErr := errors.New("job failed")
	require.Equal(t, jobErr, c.Run(context.Background(), sdk.Key("k"), func(context.Context) error { return jobErr }))
}

func TestRunWhenVigilIsUnreachableRealBackoff(t *testing.T) {
	t.Parallel()
	// With the real backoff, a refused connection costs the finished job
	// 0.75 s per ping, and the job itself nothing.
	c := sdk.New(vigiltest.ClosedURL(t), sdk.WithLogger(slog.New(slog.DiscardHandler)))
	var jobStartedAfter time.Duration
	start := time.Now()
	err := c.Run(context.Background(), sdk.Key("k"), func(context.Context) error {
		jobStartedAfter = time.Since(start)
		return nil
	})
	require.NoError(t, err)
	require.Less(t, jobStartedAfter, 100*time.Millisecond)
	require.Less(t, time.Since(start), 3*time.Second)
}

func logger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(vigiltest.NewLog(t), nil))
}

func TestScheduledAtIsSentWithEveryAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, sdk.WithSleepFunc(func(context.Context, time.Duration) error { return nil }))
	occ := time.Date(2026, 3, 2, 3, 0, 0, 0, time.FixedZone("CET", 3600))
	n := 0
	err := b.client.RunWithRetries(context.Background(), sdk.Key(b.key), func(context.Context) error {
		if n++; n == 1 {
			return errors.New("upstream 503")
		}
		return nil
	}, sdk.WithScheduledAt(occ), sdk.WithRetryPolicy(retry.QuartzFixed{MaxAttempts: 2, Interval: time.Minute}))
	require.NoError(t, err)
	pings := b.srv.Pings()
	require.Len(t, pings, 4)
	for _, p := range pings {
		require.Equal(t, "2026-03-02T02:00:00Z", p.Query.Get("scheduled_at"), "%s attempt %s", p.Kind, p.Attempt())
	}

	run, err := b.client.Start(context.Background(), sdk.Key(b.key))
	require.NoError(t, err)
	require.True(t, run.ScheduledAt().IsZero())
	require.NoError(t, run.Success(context.Background()))
	require.Empty(t, b.srv.Pings()[5].Query.Get("scheduled_at"), "none without the option")
}

func TestSettingsGoWithCreateOrUpdate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	st := sdk.Settings{Schedule: "0 2 * * *", TZ: "Europe/Berlin", Dialect: "cronie", Grace: 90*time.Second + time.Millisecond, MaxRuntime: time.Hour}
	slug := sdk.Slug(b.srv.ProjectKey(), "nightly-import")
	calls := []struct {
		m    sdk.Monitor
		want string
	}{
		{slug.WithCreate().WithSettings(st),
			"create=1&dialect=cronie&grace=91&max_runtime=3600&schedule=0+2+%2A+%2A+%2A&tz=Europe%2FBerlin"},
		{slug.WithSettings(st), ""},
		{sdk.Key(b.key).WithCreate().WithSettings(sdk.Settings{Every: time.Hour}), ""},
		{sdk.Key(b.key).WithUpdate().WithSettings(sdk.Settings{Every: time.Hour}), "every=3600&update=1"},
	}
	for _, c := range calls {
		require.NoError(t, b.client.Ping(context.Background(), c.m, sdk.KindLog, nil))
	}
	pings := b.srv.Pings()
	require.Len(t, pings, len(calls))
	for i, c := range calls {
		require.Equal(t, c.want, pings[i].Query.Encode(), c.m.String())
	}
}
