package cronwrap_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/cronwrap"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
)

// Register jobs with their monitors, declare them and start the cron.
func ExampleScheduler() {
	vigil := vigiltest.NewServer() // stands in for a Vigil server
	defer vigil.Close()

	client := sdk.New(vigil.URL(), sdk.WithAPIKey(vigiltest.APIKey), sdk.WithLogger(slog.New(slog.DiscardHandler)))
	s := cronwrap.New(cron.New(), client.Source("billing-service"))
	_, err := s.Add("CRON_TZ=Europe/Berlin 0 2 * * *", sdk.Job{
		Slug:        "nightly-invoices",
		Grace:       10 * time.Minute,
		MaxRuntime:  time.Hour,
		Deadline:    4 * time.Hour,
		RetryPolicy: retry.QuartzFixed{MaxAttempts: 3, Interval: 5 * time.Minute},
	}, func(ctx context.Context) error {
		return nil // the job's work
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // on shutdown: running jobs are told, and reported as cancelled
	if err := s.Declare(ctx); err != nil {
		fmt.Println(err) // Vigil down: log it; Start keeps trying
	}
	s.Start(ctx) // declares again every 15 minutes, and runs the cron
	defer s.Stop()
	fmt.Println(string(vigil.Declarations()[0].Raw))
	// Output:
	// {"monitors":[{"name":"nightly-invoices","slug":"nightly-invoices","schedule":{"kind":"cron","expr":"0 2 * * *","tz":"Europe/Berlin","dialect":"robfig"},"grace_seconds":600,"max_runtime_seconds":3600,"deadline_seconds":14400,"retry_policy":{"name":"quartz-fixed","max_retries":3,"max_delays_seconds":[300,300,300]}}]}
}

// Wrap reports the runs of existing cron jobs.
func ExampleWrap() {
	vigil := vigiltest.NewServer()
	defer vigil.Close()
	key := vigil.AddMonitor()
	client := sdk.New(vigil.URL())

	job := cron.NewChain(cronwrap.Wrap(client, sdk.Key(key))).Then(cron.FuncJob(func() {
		fmt.Println("backing up")
	}))
	job.Run() // what cron does at each occurrence
	vigil.Print(os.Stdout)
	// Output:
	// backing up
	// POST /ping/{key}/start?attempt=1&rid={rid}
	// POST /ping/{key}?attempt=1&duration_ms={ms}&rid={rid}
}
