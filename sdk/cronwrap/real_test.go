package cronwrap_test

// These tests run robfig/cron with fake time (testing/synctest) against a
// real Vigil server (package realvigil), and check the monitors, runs and
// incidents Vigil made of the declarations and pings.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/cronwrap"
	"github.com/vigilhq/vigil/sdk/internal/realvigil"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
)

// realClient is an SDK client of v for use inside a synctest bubble.
func realClient(t *testing.T, v *realvigil.Vigil) *sdk.Client {
	return sdk.New(v.URL, sdk.WithAPIKey(v.APIKey), sdk.WithHTTPClient(v.HTTPClient()),
		sdk.WithLogger(slog.New(slog.NewTextHandler(vigiltest.NewLog(t), nil))))
}

// cronLog is a cron.Logger that keeps what cron.Recover reports.
type cronLog struct {
	mu     sync.Mutex
	errors []string
}

func (l *cronLog) Info(string, ...any) {}

func (l *cronLog) Error(err error, msg string, _ ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors = append(l.errors, fmt.Sprintf("%s: %v", msg, err))
}

func (l *cronLog) Errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errors...)
}

func TestRealSchedulerAgainstVigil(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	synctest.Test(t, func(t *testing.T) {
		recovered := &cronLog{}
		c := cron.New(cron.WithLocation(time.UTC), cron.WithChain(cron.Recover(recovered)))
		s := cronwrap.New(c, realClient(t, v).Source("billing"))

		var minutely, flaky, hidden atomic.Int32
		minuteID, err := s.Add("* * * * *", sdk.Job{Slug: "every-minute", Grace: time.Minute}, func(context.Context) error {
			minutely.Add(1)
			return nil
		})
		require.NoError(t, err)
		_, err = s.Add("CRON_TZ=Europe/Berlin */5 * * * *", sdk.Job{
			Slug: "flaky", AlertOnFailure: "final",
			RetryPolicy: retry.QuartzFixed{MaxAttempts: 2, Interval: 10 * time.Second},
		}, func(context.Context) error {
			if flaky.Add(1)%3 != 0 {
				return errors.New("upstream 503")
			}
			return nil
		})
		require.NoError(t, err)
		_, err = s.Add("*/5 * * * *", sdk.Job{
			Slug: "doomed", RetryPolicy: retry.QuartzFixed{MaxAttempts: 1, Interval: 10 * time.Second},
		}, func(context.Context) error { return errors.New("disk full") })
		require.NoError(t, err)
		_, err = s.Add("*/5 * * * *", sdk.Job{Slug: "panicky"}, func(context.Context) error { panic("nil map write") })
		require.NoError(t, err)
		_, err = s.Add("* * * * *", sdk.Job{Slug: "hidden", NoMonitor: true}, func(context.Context) error {
			hidden.Add(1)
			return nil
		})
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s.Start(ctx)
		synctest.Wait()

		// Declared at start-up; the opted-out job is not.
		declared := v.Monitors(t, "billing")
		require.Equal(t, []string{"doomed", "every-minute", "flaky", "panicky"}, realvigil.Slugs(declared))
		for _, m := range declared {
			require.Equal(t, "billing discovered new", realvigil.StatusLine(m), m.Slug)
		}
		_, ok := v.FindMonitor(t, "hidden")
		require.False(t, ok, "an opted-out job is not declared")
		flakyMon := v.Monitor(t, "flaky")
		require.Equal(t, "*/5 * * * *", flakyMon.Schedule.Expr)
		require.Equal(t, "Europe/Berlin", flakyMon.Schedule.TZ)
		require.Equal(t, "robfig", flakyMon.Schedule.Dialect, "judged by robfig/cron's own fire times")
		require.Equal(t, []int64{10, 10}, flakyMon.RetryPolicy.MaxDelaysSeconds)
		require.Equal(t, int64(60), v.Monitor(t, "every-minute").GraceSeconds)

		// Five minutes of fake time.
		time.Sleep(5*time.Minute + 30*time.Second)
		synctest.Wait()
		require.EqualValues(t, 5, minutely.Load())
		require.EqualValues(t, 5, hidden.Load())

		minute := v.Monitor(t, "every-minute")
		require.Equal(t, []string{"success 1", "success 1", "success 1", "success 1", "success 1"}, realvigil.RunOutcomes(v.Runs(t, minute.ID)))
		require.Equal(t, "up", minute.Status)

		// Failing twice, then succeeding on the last retry: no incident.
		require.Equal(t, []string{"fail 1 retry", "fail 2 retry", "success 3"}, realvigil.RunOutcomes(v.Runs(t, flakyMon.ID)))
		require.Empty(t, v.Incidents(t, flakyMon.ID))
		require.Equal(t, "up", v.Monitor(t, "flaky").Status)

		// Out of retries: exactly one failed incident.
		doomed := v.Monitor(t, "doomed")
		require.Equal(t, []string{"fail 1 retry", "fail 2"}, realvigil.RunOutcomes(v.Runs(t, doomed.ID)))
		require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, doomed.ID)))
		require.Equal(t, "down", doomed.Status)

		// A panic is a failed run, and goes on to cron.Recover.
		panicky := v.Monitor(t, "panicky")
		require.Equal(t, []string{"fail 1"}, realvigil.RunOutcomes(v.Runs(t, panicky.ID)))
		require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, panicky.ID)))
		pings := v.Pings(t, panicky.ID)
		require.True(t, strings.HasPrefix(pings[1].Body, "panic: nil map write"), pings[1].Body)
		require.Equal(t, []string{"panic: nil map write"}, recovered.Errors(), "the panic was raised again")

		// every-minute is removed from the code: at the next declaration it
		// is no longer discovered, and paused, with its history.
		s.Remove(minuteID)
		time.Sleep(sdk.DeclareIntervalDefault)
		synctest.Wait()
		require.Equal(t, "billing undiscovered undeclared", realvigil.StatusLine(v.Monitor(t, "every-minute")))
		require.Len(t, v.Runs(t, minute.ID), 5)
		require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, doomed.ID)), "still the one incident")

		// Added back, it is declared again and watched again from now.
		_, err = s.Add("* * * * *", sdk.Job{Slug: "every-minute", Grace: time.Minute}, func(context.Context) error { return nil })
		require.NoError(t, err)
		require.NoError(t, s.Declare(ctx))
		require.Equal(t, "billing discovered up", realvigil.StatusLine(v.Monitor(t, "every-minute")))

		cancel()
		<-s.Stop().Done()
	})
}

func TestRealSchedulerShutdownIsCancelled(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	synctest.Test(t, func(t *testing.T) {
		s := cronwrap.New(cron.New(cron.WithLocation(time.UTC)), realClient(t, v).Source("app"))
		_, err := s.Add("@every 1m", sdk.Job{Slug: "long", RetryPolicy: retry.QuartzFixed{MaxAttempts: 3, Interval: time.Second}},
			func(ctx context.Context) error {
				<-ctx.Done()
				return ctx.Err()
			})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		s.Start(ctx)
		time.Sleep(90 * time.Second) // the run started at 1m and goes on
		synctest.Wait()
		long := v.Monitor(t, "long")
		require.Equal(t, "running", long.Status)

		cancel() // the host shuts down
		<-s.Stop().Done()
		synctest.Wait()
		require.Equal(t, []string{"cancelled 1"}, realvigil.RunOutcomes(v.Runs(t, long.ID)))
		require.Empty(t, v.Incidents(t, long.ID))
		require.Equal(t, "up", v.Monitor(t, "long").Status)
	})
}

func TestRealWrapReportsRunsAndPanics(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	m := v.CreateMonitor(t, map[string]any{"slug": "legacy-job"})
	client := sdk.New(v.URL, sdk.WithLogger(slog.New(slog.NewTextHandler(vigiltest.NewLog(t), nil))))
	recovered := &cronLog{}
	chain := cron.NewChain(cron.Recover(recovered), cronwrap.Wrap(client, sdk.Key(m.PingKey)))

	chain.Then(cron.FuncJob(func() {})).Run()
	chain.Then(cron.FuncJob(func() { panic("disk full") })).Run()

	require.Equal(t, []string{"success 1", "fail 1"}, realvigil.RunOutcomes(v.Runs(t, m.ID)))
	require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, m.ID)))
	require.Equal(t, []string{"panic: disk full"}, recovered.Errors())
}
