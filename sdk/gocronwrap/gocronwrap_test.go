package gocronwrap_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/gocronwrap"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
)

func newClient(t *testing.T, srv *vigiltest.Server) *sdk.Client {
	return sdk.New("http://vigil.test", sdk.WithAPIKey(vigiltest.APIKey),
		sdk.WithHTTPClient(&http.Client{Transport: srv.Transport()}),
		sdk.WithLogger(slog.New(slog.NewTextHandler(vigiltest.NewLog(t), nil))))
}

// kinds lists "kind attempt retry_in" of the pings to key.
func kinds(pings []vigiltest.Ping, key string) []string {
	var out []string
	for _, p := range pings {
		if p.Key != key {
			continue
		}
		s := p.Kind
		if a := p.Attempt(); a != "" {
			s += " " + a
		}
		if r := p.RetryIn(); r != "" {
			s += " retry_in=" + r
		}
		out = append(out, s)
	}
	return out
}

func TestSchedulerDeclaresReportsAndRetries(t *testing.T) {
	t.Parallel()
	srv := vigiltest.New(t)
	synctest.Test(t, func(t *testing.T) {
		client := newClient(t, srv)
		gs, err := gocron.NewScheduler(gocron.WithLocation(time.UTC))
		require.NoError(t, err)
		s := gocronwrap.New(gs, client.Source("reports"), gocronwrap.WithLocation(time.UTC))

		var hourly, flaky, hidden atomic.Int32
		hourlyJob, err := s.NewJob(gocronwrap.Cron("0 * * * *", false), sdk.Job{Slug: "hourly", Name: "Hourly report", Tags: []string{"reports"}},
			func(context.Context) error {
				hourly.Add(1)
				return nil
			})
		require.NoError(t, err)
		require.Equal(t, "hourly", hourlyJob.Name())
		_, err = s.NewJob(gocronwrap.Every(10*time.Minute), sdk.Job{
			Slug: "sync", RetryPolicy: retry.NexJob{Attempts: 3, InitialDelay: 30 * time.Second, Multiplier: 2},
		}, func(context.Context) error {
			if n := flaky.Add(1); n == 1 || n == 2 {
				return errors.New("timeout talking to supplier")
			}
			return nil
		})
		require.NoError(t, err)
		_, err = s.NewJob(gocronwrap.Every(time.Minute), sdk.Job{NoMonitor: true}, func(context.Context) error {
			hidden.Add(1)
			return nil
		})
		require.NoError(t, err)
		_, err = s.NewJob(gocronwrap.Every(time.Minute), sdk.Job{Slug: "sync"}, func(context.Context) error { return nil })
		require.ErrorIs(t, err, gocronwrap.ErrDuplicateSlug)
		_, err = s.NewJob(gocronwrap.Every(time.Minute), sdk.Job{}, func(context.Context) error { return nil })
		require.ErrorIs(t, err, gocronwrap.ErrNoSlug)
		_, err = s.NewJob(gocronwrap.Every(-time.Minute), sdk.Job{Slug: "neg"}, func(context.Context) error { return nil })
		require.Error(t, err)

		s.Start(context.Background())
		synctest.Wait()
		decls := srv.Declarations()
		require.Len(t, decls, 1)
		require.JSONEq(t, `{"monitors":[
		  {"name":"Hourly report","slug":"hourly","tags":["reports"],"schedule":{"kind":"cron","dialect":"robfig","expr":"0 * * * *"}},
		  {"name":"sync","slug":"sync","schedule":{"kind":"interval","every_seconds":600},
		   "retry_policy":{"name":"nexjob-retry","max_retries":2,"max_delays_seconds":[33,66]}}]}`, string(decls[0].Raw))

		time.Sleep(time.Hour + 30*time.Second)
		synctest.Wait()
		require.EqualValues(t, 1, hourly.Load())
		require.EqualValues(t, 60, hidden.Load())
		pings := srv.Pings()
		syncKey := srv.DeclaredKey("reports", "sync")
		hourlyKey := srv.DeclaredKey("reports", "hourly")
		require.NotEmpty(t, syncKey)
		require.Equal(t, []string{"start 1", "success 1"}, kinds(pings, hourlyKey))
		for _, p := range pings {
			if p.Key == hourlyKey {
				require.Equal(t, "2000-01-01T01:00:00Z", p.Query.Get("scheduled_at"), "the job's scheduled run")
			}
		}
		got := kinds(pings, syncKey)
		// 30 s ±10% rounds up to 27..33 s; 60 s ±10% to 54..66 s.
		require.Regexp(t, `^fail 1 retry_in=(2[7-9]|3[0-3])$`, got[1])
		require.Regexp(t, `^fail 2 retry_in=(5[4-9]|6[0-6])$`, got[3])
		require.Equal(t, []string{"start 1", "start 2", "start 3", "success 3"}, []string{got[0], got[2], got[4], got[5]})
		for _, k := range got[6:] {
			require.Contains(t, []string{"start 1", "success 1"}, k)
		}

		// Removing a job drops it from the next declaration.
		require.NoError(t, s.RemoveJob(hourlyJob.ID()))
		time.Sleep(sdk.DeclareIntervalDefault)
		synctest.Wait()
		decls = srv.Declarations()
		require.Len(t, decls, 6, "declared at start-up and every 15 minutes")
		require.Len(t, decls[4].Monitors, 2)
		require.Len(t, decls[5].Monitors, 1)
		require.Equal(t, "sync", decls[5].Monitors[0]["slug"])
		require.NoError(t, s.Shutdown())
	})
}

func TestShutdownReportsCancel(t *testing.T) {
	t.Parallel()
	srv := vigiltest.New(t)
	synctest.Test(t, func(t *testing.T) {
		client := newClient(t, srv)
		gs, err := gocron.NewScheduler(gocron.WithLocation(time.UTC))
		require.NoError(t, err)
		s := gocronwrap.New(gs, client.Source("app"))
		_, err = s.NewJob(gocronwrap.Every(time.Minute), sdk.Job{Slug: "long", MaxRuntime: 10 * time.Minute, RuntimeLimit: true},
			func(ctx context.Context) error {
				deadline, ok := ctx.Deadline()
				require.True(t, ok)
				require.Equal(t, time.Now().Add(10*time.Minute), deadline)
				<-ctx.Done()
				return ctx.Err()
			})
		require.NoError(t, err)
		s.Start(context.Background())
		time.Sleep(90 * time.Second)
		synctest.Wait()
		require.NoError(t, s.Shutdown())
		synctest.Wait()
		pings := srv.Pings()
		require.Len(t, pings, 2)
		require.Equal(t, []string{"start 1", "cancel 1"}, kinds(pings, pings[0].Key))
	})
}

func TestListeners(t *testing.T) {
	t.Parallel()
	srv := vigiltest.New(t)
	key := srv.AddMonitor()
	synctest.Test(t, func(t *testing.T) {
		client := newClient(t, srv)
		gs, err := gocron.NewScheduler()
		require.NoError(t, err)
		var n atomic.Int32
		_, err = gs.NewJob(gocron.DurationJob(time.Minute), gocron.NewTask(func() error {
			if n.Add(1) == 2 {
				return errors.New("second run failed")
			}
			return nil
		}), gocronwrap.Listeners(client, sdk.Key(key)))
		require.NoError(t, err)
		gs.Start()
		time.Sleep(2*time.Minute + time.Second)
		synctest.Wait()
		require.NoError(t, gs.Shutdown())
		pings := srv.Pings()
		require.Equal(t, []string{"start", "success", "start", "fail"}, kinds(pings, key))
		require.Equal(t, "second run failed", pings[3].Body)
	})
}
