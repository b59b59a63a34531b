package cronwrap_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/cronwrap"
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
		c := cron.New(cron.WithLocation(time.UTC))
		s := cronwrap.New(c, client.Source("billing"))

		var minutely, flaky, hidden atomic.Int32
		minuteID, err := s.Add("* * * * *", sdk.Job{Slug: "every-minute", Grace: time.Minute}, func(context.Context) error {
			minutely.Add(1)
			return nil
		})
		require.NoError(t, err)
		_, err = s.Add("CRON_TZ=Europe/Berlin */5 * * * *", sdk.Job{
			Slug: "flaky", MaxRuntime: time.Hour, Deadline: 2 * time.Hour,
			RetryPolicy: retry.QuartzFixed{MaxAttempts: 2, Interval: 10 * time.Second},
		}, func(context.Context) error {
			if flaky.Add(1)%3 != 0 {
				return errors.New("upstream 503")
			}
			return nil
		})
		require.NoError(t, err)
		_, err = s.Add("* * * * *", sdk.Job{Slug: "hidden", NoMonitor: true}, func(context.Context) error {
			hidden.Add(1)
			return nil
		})
		require.NoError(t, err)

		_, err = s.Add("* * * * *", sdk.Job{Slug: "flaky"}, func(context.Context) error { return nil })
		require.ErrorIs(t, err, cronwrap.ErrDuplicateSlug)
		_, err = s.Add("* * * * *", sdk.Job{}, func(context.Context) error { return nil })
		require.ErrorIs(t, err, cronwrap.ErrNoSlug)
		_, err = s.Add("not a spec", sdk.Job{Slug: "bad"}, func(context.Context) error { return nil })
		require.Error(t, err)

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s.Start(ctx)
		synctest.Wait()

		decls := srv.Declarations()
		require.Len(t, decls, 1, "declared at start-up")
		require.JSONEq(t, `{"monitors":[
		  {"name":"every-minute","slug":"every-minute","schedule":{"kind":"cron","dialect":"robfig","expr":"* * * * *"},"grace_seconds":60},
		  {"name":"flaky","slug":"flaky","schedule":{"kind":"cron","dialect":"robfig","expr":"*/5 * * * *","tz":"Europe/Berlin"},
		   "max_runtime_seconds":3600,"deadline_seconds":7200,
		   "retry_policy":{"name":"quartz-fixed","max_retries":2,"max_delays_seconds":[10,10]}}]}`,
			string(decls[0].Raw), "the opted-out job is not declared")
		require.Empty(t, srv.Pings(), "no run yet")

		// Five minutes: five minutely runs, and one flaky occurrence that
		// fails twice and succeeds on its second retry.
		time.Sleep(5*time.Minute + 30*time.Second)
		synctest.Wait()
		require.EqualValues(t, 5, minutely.Load())
		require.EqualValues(t, 3, flaky.Load())
		require.EqualValues(t, 5, hidden.Load())

		pings := srv.Pings()
		keys := map[string]bool{}
		var minuteKey, flakyKey string
		for _, p := range pings {
			keys[p.Key] = true
			if strings.HasPrefix(p.Body, "upstream") {
				flakyKey = p.Key
			}
		}
		for k := range keys {
			if k != flakyKey {
				minuteKey = k
			}
		}
		require.Len(t, keys, 2, "only monitored jobs ping")
		require.Equal(t, []string{
			"start 1", "fail 1 retry_in=10", "start 2", "fail 2 retry_in=10", "start 3", "success 3",
		}, kinds(pings, flakyKey))
		require.Equal(t, []string{
			"start 1", "success 1", "start 1", "success 1", "start 1", "success 1", "start 1", "success 1", "start 1", "success 1",
		}, kinds(pings, minuteKey))
		// Every ping names its occurrence: the entry's activation time,
		// kept by the flaky occurrence's retries.
		for _, p := range pings {
			require.NotEmpty(t, p.Query.Get("scheduled_at"), "%s %s", p.Kind, p.Path)
			if p.Key == flakyKey {
				require.Equal(t, "2000-01-01T00:05:00Z", p.Query.Get("scheduled_at"))
			}
		}
		require.Equal(t, "2000-01-01T00:01:00Z", pings[0].Query.Get("scheduled_at"))

		// A job removed from the code is left out of the next declaration.
		s.Remove(minuteID)
		time.Sleep(sdk.DeclareIntervalDefault)
		synctest.Wait()
		decls = srv.Declarations()
		require.Len(t, decls, 2)
		require.Len(t, decls[1].Monitors, 1)
		require.Equal(t, "flaky", decls[1].Monitors[0]["slug"])

		cancel()
		<-s.Stop().Done()
	})
}

func TestSchedulerShutdownReportsCancel(t *testing.T) {
	t.Parallel()
	srv := vigiltest.New(t)
	synctest.Test(t, func(t *testing.T) {
		client := newClient(t, srv)
		s := cronwrap.New(cron.New(cron.WithLocation(time.UTC)), client.Source("app"))
		_, err := s.Add("@every 1m", sdk.Job{Slug: "long", MaxRuntime: time.Hour, RuntimeLimit: true}, func(ctx context.Context) error {
			deadline, ok := ctx.Deadline()
			require.True(t, ok, "max runtime is the context deadline")
			require.Equal(t, time.Now().Add(time.Hour), deadline)
			<-ctx.Done()
			return ctx.Err()
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		s.Start(ctx)
		time.Sleep(90 * time.Second) // the run started at 1m and is going on
		synctest.Wait()
		cancel() // the host shuts down
		<-s.Stop().Done()
		synctest.Wait()

		decl := srv.Declarations()[0]
		require.JSONEq(t, `{"kind":"interval","every_seconds":60}`, mustJSON(t, decl.Monitors[0]["schedule"]))
		pings := srv.Pings()
		require.Len(t, pings, 2)
		require.Equal(t, []string{"start 1", "cancel 1"}, kinds(pings, pings[0].Key))
		require.Equal(t, pings[0].RID(), pings[1].RID())
	})
}

func TestWrapReportsRunsAndPanics(t *testing.T) {
	t.Parallel()
	srv := vigiltest.New(t)
	key := srv.AddMonitor()
	client := newClient(t, srv)

	ran := false
	cronwrap.Wrap(client, sdk.Key(key))(cron.FuncJob(func() { ran = true })).Run()
	require.True(t, ran)

	panicking := cron.NewChain(cronwrap.Wrap(client, sdk.Key(key))).Then(cron.FuncJob(func() { panic("disk full") }))
	require.PanicsWithValue(t, "disk full", panicking.Run)

	pings := srv.Pings()
	require.Equal(t, []string{"start 1", "success 1", "start 1", "fail 1"}, kinds(pings, key))
	require.Equal(t, pings[0].RID(), pings[1].RID())
	require.NotEqual(t, pings[0].RID(), pings[2].RID())
	require.True(t, strings.HasPrefix(pings[3].Body, "panic: disk full"))

	// Chained inside cron.Recover, the panic is reported, then recovered.
	recovered := cron.NewChain(cron.Recover(cron.DiscardLogger), cronwrap.Wrap(client, sdk.Key(key))).
		Then(cron.FuncJob(func() { panic("again") }))
	require.NotPanics(t, recovered.Run)
	require.Len(t, srv.Pings(), 6)
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	robfig := func(expr, tz string) *sdk.Schedule {
		s := sdk.Cron(expr, tz)
		s.Dialect = "robfig"
		return s
	}
	s, d, err := cronwrap.ParseSchedule("CRON_TZ=Europe/Berlin 0 2 * * *", false)
	require.NoError(t, err)
	require.Equal(t, robfig("0 2 * * *", "Europe/Berlin"), d)
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC), s.Next(from).UTC())

	_, d, err = cronwrap.ParseSchedule("30 0 2 * * *", true)
	require.NoError(t, err)
	require.Equal(t, robfig("30 0 2 * * *", ""), d)
	_, d, err = cronwrap.ParseSchedule("@every 15m", false)
	require.NoError(t, err)
	require.Equal(t, sdk.Every(15*time.Minute), d)

	_, _, err = cronwrap.ParseSchedule("30 0 2 * * *", false)
	require.Error(t, err, "six fields need withSeconds")
	_, _, err = cronwrap.ParseSchedule("nonsense", false)
	require.Error(t, err)
}
