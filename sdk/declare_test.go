package sdk_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
)

func TestDeclareBodyAndPingByURL(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	specs := []sdk.MonitorSpec{{
		Name: "Nightly import", Slug: "nightly-import", Tags: []string{"etl"},
		Schedule:     sdk.Cron("0 2 * * *", "Europe/Berlin"),
		GraceSeconds: 300, MaxRuntimeSeconds: 3600, DeadlineSeconds: 10800,
		AlertOnFailure: "final", FailureThreshold: 1, RecoveryThreshold: 2, Overlap: "alert",
		Channels:    []string{"ch-1"},
		RetryPolicy: sdk.RetrySpec(retry.Hangfire{Attempts: 3, DelaysInSeconds: []int{30, 120, 600}}),
	}, {
		Slug: "queue-drain", Schedule: sdk.Every(5 * time.Minute),
	}}
	declared, err := b.client.Declare(ctx, "billing-service", specs)
	require.NoError(t, err)

	decls := b.srv.Declarations()
	require.Len(t, decls, 1)
	require.Equal(t, "billing-service", decls[0].Source)
	want := `{"monitors":[
	  {"name":"Nightly import","slug":"nightly-import","tags":["etl"],
	   "schedule":{"kind":"cron","expr":"0 2 * * *","tz":"Europe/Berlin"},
	   "grace_seconds":300,"max_runtime_seconds":3600,"deadline_seconds":10800,
	   "alert_on_failure":"final","failure_threshold":1,"recovery_threshold":2,"overlap":"alert",
	   "channels":["ch-1"],
	   "retry_policy":{"name":"hangfire-delays","max_retries":3,"max_delays_seconds":[30,120,600]}},
	  {"slug":"queue-drain","schedule":{"kind":"interval","every_seconds":300}}]}`
	require.JSONEq(t, want, string(decls[0].Raw))

	require.Len(t, declared, 2)
	require.Equal(t, "nightly-import", declared[0].Slug)
	require.Equal(t, "Europe/Berlin", declared[0].Schedule.TZ)
	require.Equal(t, 3, declared[0].RetryPolicy.MaxRetries)
	require.NotEmpty(t, declared[0].ID)
	require.Regexp(t, uuidV4, declared[0].PingKey)
	require.Equal(t, b.srv.URL()+"/ping/"+declared[0].PingKey, declared[0].PingURL)
	require.True(t, declared[0].Discovered)

	// The SDK pings declared monitors by their ping URL.
	require.NoError(t, b.client.Run(ctx, declared[0].Monitor(), func(context.Context) error { return nil }))
	pings := b.srv.Pings()
	require.Equal(t, "/ping/"+declared[0].PingKey+"/start", pings[0].Path)
	require.Equal(t, "/ping/"+declared[0].PingKey, pings[1].Path)

	// Declaring again keeps the keys.
	again, err := b.client.Declare(ctx, "billing-service", specs[:1])
	require.NoError(t, err)
	require.Equal(t, declared[0].PingKey, again[0].PingKey)
}

func TestRetrySpecHangfireDefault(t *testing.T) {
	t.Parallel()
	spec := sdk.RetrySpec(retry.HangfireDefault())
	data, err := json.Marshal(spec)
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"hangfire-default","max_retries":10,
	  "max_delays_seconds":[44,74,118,212,416,814,1514,2648,4372,6866]}`, string(data))
	require.Nil(t, sdk.RetrySpec(nil))
	require.Equal(t, []int64{}, sdk.RetrySpec(retry.Hangfire{}).MaxDelaysSeconds)
}

func TestDeclareErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.client.Declare(ctx, "", nil)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	_, err = b.client.Declare(ctx, "s", []sdk.MonitorSpec{{Slug: "a"}, {Slug: "a"}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	_, err = b.client.Declare(ctx, "s", []sdk.MonitorSpec{{Name: "no slug"}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	_, err = sdk.New(b.srv.URL()).Declare(ctx, "s", nil)
	require.ErrorIs(t, err, sdk.ErrInvalid, "declaring needs an API key")
	require.Empty(t, b.srv.Declarations())

	_, err = sdk.New(b.srv.URL(), sdk.WithAPIKey("wrong")).Declare(ctx, "s", nil)
	require.ErrorIs(t, err, sdk.ErrUnauthorized)
	require.ErrorContains(t, err, "missing or unknown API key")
	require.NotContains(t, err.Error(), "wrong")

	// An empty set is declared as an empty list: every monitor of the
	// source is no longer discovered.
	_, err = b.client.Declare(ctx, "s", nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"monitors":[]}`, string(b.srv.Declarations()[0].Raw))

	b.srv.FailNext(http.StatusInternalServerError)
	_, err = b.client.Declare(ctx, "s", nil)
	require.NoError(t, err, "a 5xx is retried")
}

func TestSourceDeclaresAtStartAndPeriodically(t *testing.T) {
	t.Parallel()
	// The recorder's listener lives outside the bubble; inside, requests go
	// through its in-memory transport.
	srv := vigiltest.New(t)
	synctest.Test(t, func(t *testing.T) {
		c := sdk.New("http://vigil.test", sdk.WithAPIKey(vigiltest.APIKey),
			sdk.WithHTTPClient(&http.Client{Transport: srv.Transport()}), sdk.WithLogger(logger(t)))
		src := c.Source("app", sdk.WithProjectPingKey(srv.ProjectKey()))
		src.Set(sdk.MonitorSpec{Slug: "a", Schedule: sdk.Every(time.Minute)})
		src.Set(sdk.MonitorSpec{Slug: "b", Schedule: sdk.Every(time.Hour)})

		// Before any declaration the project ping key and slug address it.
		m, ok := src.Monitor("a")
		require.True(t, ok)
		require.Equal(t, sdk.Slug(srv.ProjectKey(), "a"), m)
		_, ok = src.Monitor("unknown")
		require.False(t, ok)

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			src.Run(ctx)
			close(done)
		}()
		synctest.Wait()
		require.Len(t, srv.Declarations(), 1, "declared at start-up")
		m, ok = src.Monitor("a")
		require.True(t, ok)
		require.Contains(t, m.String(), "ping URL")

		src.Remove("b")
		time.Sleep(sdk.DeclareIntervalDefault - time.Second)
		synctest.Wait()
		require.Len(t, srv.Declarations(), 1)
		time.Sleep(time.Second)
		synctest.Wait()
		decls := srv.Declarations()
		require.Len(t, decls, 2, "declared again after 15 minutes")
		require.Len(t, decls[1].Monitors, 1)
		require.Equal(t, "a", decls[1].Monitors[0]["slug"], "a removed job is left out")

		// A failed declaration is tried again after a minute.
		srv.FailNext(400)
		time.Sleep(sdk.DeclareIntervalDefault)
		synctest.Wait()
		require.Len(t, srv.Declarations(), 2)
		time.Sleep(sdk.DeclareRetryDefault)
		synctest.Wait()
		require.Len(t, srv.Declarations(), 3)

		cancel()
		<-done
	})
}

// TestJobHideOutput: a job that hides its output declares notify_output
// false; any other leaves the field out, for Vigil's default.
func TestJobHideOutput(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(sdk.Job{Slug: "secret", HideOutput: true}.Spec(sdk.Every(time.Hour)))
	require.NoError(t, err)
	require.JSONEq(t, `{"slug":"secret","name":"secret","schedule":{"kind":"interval","every_seconds":3600},"notify_output":false}`, string(b))
	b, err = json.Marshal(sdk.Job{Slug: "plain"}.Spec(sdk.Every(time.Hour)))
	require.NoError(t, err)
	require.NotContains(t, string(b), "notify_output")
}

// TestJobRunRules: MinRuntime, Early and TooOften declare the run rules;
// a job without them leaves the fields out, for Vigil's defaults (off).
func TestJobRunRules(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(sdk.Job{Slug: "backup", MaxRuntime: time.Hour, MinRuntime: 90 * time.Second, Early: 5 * time.Minute,
		TooOften: "alert"}.Spec(sdk.Cron("0 2 * * *", "")))
	require.NoError(t, err)
	require.JSONEq(t, `{"slug":"backup","name":"backup","schedule":{"kind":"cron","expr":"0 2 * * *"},
	  "max_runtime_seconds":3600,"min_runtime_seconds":90,"early_seconds":300,"too_often":"alert"}`, string(b))
	b, err = json.Marshal(sdk.Job{Slug: "plain"}.Spec(sdk.Every(time.Hour)))
	require.NoError(t, err)
	for _, f := range []string{"min_runtime_seconds", "early_seconds", "too_often"} {
		require.NotContains(t, string(b), f)
	}
}

// TestJobDependsOn: DependsOn declares depends_on, by slug; a job without
// it leaves the field out.
func TestJobDependsOn(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(sdk.Job{Slug: "report", DependsOn: []string{"db", "backup"}}.Spec(sdk.Every(time.Hour)))
	require.NoError(t, err)
	require.JSONEq(t, `{"slug":"report","name":"report","schedule":{"kind":"interval","every_seconds":3600},
	  "depends_on":["db","backup"]}`, string(b))
	b, err = json.Marshal(sdk.Job{Slug: "plain"}.Spec(sdk.Every(time.Hour)))
	require.NoError(t, err)
	require.NotContains(t, string(b), "depends_on")
}
