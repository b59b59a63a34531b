package gocronwrap_test

// These tests run gocron with fake time (testing/synctest) against a real
// Vigil server (package realvigil), and check the monitors, runs and
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

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/gocronwrap"
	"github.com/vigilhq/vigil/sdk/internal/realvigil"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
)

// realClient is an SDK client of v for use inside a synctest bubble.
func realClient(t *testing.T, v *realvigil.Vigil) *sdk.Client {
	return sdk.New(v.URL, sdk.WithAPIKey(v.APIKey), sdk.WithHTTPClient(v.HTTPClient()),
		sdk.WithLogger(slog.New(slog.NewTextHandler(vigiltest.NewLog(t), nil))))
}

func TestRealSchedulerAgainstVigil(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	synctest.Test(t, func(t *testing.T) {
		gs, err := gocron.NewScheduler(gocron.WithLocation(time.UTC))
		require.NoError(t, err)
		s := gocronwrap.New(gs, realClient(t, v).Source("reports"), gocronwrap.WithLocation(time.UTC))

		var syncs, hidden atomic.Int32
		hourly, err := s.NewJob(gocronwrap.Cron("0 * * * *", false), sdk.Job{Slug: "hourly", Name: "Hourly report"},
			func(context.Context) error { return nil })
		require.NoError(t, err)
		_, err = s.NewJob(gocronwrap.Every(10*time.Minute), sdk.Job{
			Slug: "sync", AlertOnFailure: "final",
			RetryPolicy: retry.NexJob{Attempts: 3, InitialDelay: 30 * time.Second, Multiplier: 2},
		}, func(context.Context) error {
			if syncs.Add(1) <= 2 {
				return errors.New("timeout talking to supplier")
			}
			return nil
		})
		require.NoError(t, err)
		_, err = s.NewJob(gocronwrap.Every(10*time.Minute), sdk.Job{
			Slug: "doomed", RetryPolicy: retry.NexJob{Attempts: 2, InitialDelay: 30 * time.Second, Multiplier: 2},
		}, func(context.Context) error { return errors.New("disk full") })
		require.NoError(t, err)
		var mu sync.Mutex
		var panics []string
		_, err = s.NewJob(gocronwrap.Every(10*time.Minute), sdk.Job{Slug: "panicky"},
			func(context.Context) error { panic("nil map write") },
			gocron.WithEventListeners(gocron.AfterJobRunsWithPanic(func(_ uuid.UUID, _ string, p any) {
				mu.Lock()
				defer mu.Unlock()
				panics = append(panics, fmt.Sprint(p))
			})))
		require.NoError(t, err)
		_, err = s.NewJob(gocronwrap.Every(time.Minute), sdk.Job{NoMonitor: true}, func(context.Context) error {
			hidden.Add(1)
			return nil
		})
		require.NoError(t, err)

		s.Start(context.Background())
		synctest.Wait()

		// Declared at start-up; the opted-out job is not.
		declared := v.Monitors(t, "reports")
		require.Equal(t, []string{"doomed", "hourly", "panicky", "sync"}, realvigil.Slugs(declared))
		for _, m := range declared {
			require.Equal(t, "reports discovered new", realvigil.StatusLine(m), m.Slug)
		}
		require.Len(t, v.Monitors(t, ""), 4, "an opted-out job is not declared")
		require.Equal(t, "Hourly report", v.Monitor(t, "hourly").Name)
		require.Equal(t, "0 * * * *", v.Monitor(t, "hourly").Schedule.Expr)
		require.Equal(t, "robfig", v.Monitor(t, "hourly").Schedule.Dialect, "gocron runs robfig/cron schedules")
		syncMon := v.Monitor(t, "sync")
		require.Equal(t, "interval", syncMon.Schedule.Kind)
		require.Equal(t, int64(600), syncMon.Schedule.EverySeconds)
		require.Equal(t, 2, syncMon.RetryPolicy.MaxRetries)

		// Fifteen minutes of fake time: each ten-minute job runs once,
		// with its retries.
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		require.EqualValues(t, 15, hidden.Load())

		// Failing twice, then succeeding on the last retry: no incident.
		require.Equal(t, []string{"fail 1 retry", "fail 2 retry", "success 3"}, realvigil.RunOutcomes(v.Runs(t, syncMon.ID)))
		require.Empty(t, v.Incidents(t, syncMon.ID))
		require.Equal(t, "up", v.Monitor(t, "sync").Status)

		// Out of attempts: exactly one failed incident.
		doomed := v.Monitor(t, "doomed")
		require.Equal(t, []string{"fail 1 retry", "fail 2"}, realvigil.RunOutcomes(v.Runs(t, doomed.ID)))
		require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, doomed.ID)))
		require.Equal(t, "down", doomed.Status)

		// A panic is a failed run, and goes on to gocron.
		panicky := v.Monitor(t, "panicky")
		require.Equal(t, []string{"fail 1"}, realvigil.RunOutcomes(v.Runs(t, panicky.ID)))
		require.Equal(t, []string{"failed"}, realvigil.IncidentKinds(v.Incidents(t, panicky.ID)))
		require.True(t, strings.HasPrefix(v.Pings(t, panicky.ID)[1].Body, "panic: nil map write"))
		mu.Lock()
		require.Equal(t, []string{"nil map write"}, panics, "the panic was raised again")
		mu.Unlock()

		// hourly is removed from the code: at the next declaration it is no
		// longer discovered, and paused.
		require.NoError(t, s.RemoveJob(hourly.ID()))
		time.Sleep(sdk.DeclareIntervalDefault)
		synctest.Wait()
		require.Equal(t, "reports undiscovered undeclared", realvigil.StatusLine(v.Monitor(t, "hourly")))

		// Added back, it is declared again and resumes, as new.
		_, err = s.NewJob(gocronwrap.Cron("0 * * * *", false), sdk.Job{Slug: "hourly", Name: "Hourly report"},
			func(context.Context) error { return nil })
		require.NoError(t, err)
		require.NoError(t, s.Declare(context.Background()))
		require.Equal(t, "reports discovered new", realvigil.StatusLine(v.Monitor(t, "hourly")))
		require.NoError(t, s.Shutdown())
	})
}

func TestRealShutdownIsCancelled(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	synctest.Test(t, func(t *testing.T) {
		gs, err := gocron.NewScheduler(gocron.WithLocation(time.UTC))
		require.NoError(t, err)
		s := gocronwrap.New(gs, realClient(t, v).Source("app"))
		_, err = s.NewJob(gocronwrap.Every(time.Minute), sdk.Job{Slug: "long", RetryPolicy: retry.NexJobDefault()},
			func(ctx context.Context) error {
				<-ctx.Done()
				return ctx.Err()
			})
		require.NoError(t, err)
		s.Start(context.Background())
		time.Sleep(90 * time.Second) // the run started at 1m and goes on
		synctest.Wait()
		long := v.Monitor(t, "long")
		require.Equal(t, "running", long.Status)

		require.NoError(t, s.Shutdown()) // the host shuts down
		synctest.Wait()
		require.Equal(t, []string{"cancelled 1"}, realvigil.RunOutcomes(v.Runs(t, long.ID)))
		require.Empty(t, v.Incidents(t, long.ID))
		require.Equal(t, "up", v.Monitor(t, "long").Status)
	})
}
