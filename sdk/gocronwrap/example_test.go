package gocronwrap_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/gocronwrap"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
)

// Add jobs through the wrapper, declare them and start gocron.
func ExampleScheduler() {
	vigil := vigiltest.NewServer() // stands in for a Vigil server
	defer vigil.Close()

	client := sdk.New(vigil.URL(), sdk.WithAPIKey(vigiltest.APIKey), sdk.WithLogger(slog.New(slog.DiscardHandler)))
	gs, err := gocron.NewScheduler()
	if err != nil {
		fmt.Println(err)
		return
	}
	s := gocronwrap.New(gs, client.Source("reports"))
	_, err = s.NewJob(gocronwrap.Every(15*time.Minute), sdk.Job{
		Slug:        "sync-prices",
		Grace:       2 * time.Minute,
		RetryPolicy: retry.NexJob{Attempts: 3, InitialDelay: 30 * time.Second},
	}, func(ctx context.Context) error {
		return nil // the job's work
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = s.NewJob(gocronwrap.Every(time.Minute), sdk.Job{NoMonitor: true}, func(ctx context.Context) error {
		return nil // runs, but is neither declared nor reported
	})

	if err := s.Declare(context.Background()); err != nil {
		fmt.Println(err) // Vigil down: log it; Start keeps trying
	}
	s.Start(context.Background()) // declares again every 15 minutes, and starts gocron
	defer func() { _ = s.Shutdown() }()
	fmt.Println(string(vigil.Declarations()[0].Raw))
	// Output:
	// {"monitors":[{"name":"sync-prices","slug":"sync-prices","schedule":{"kind":"interval","every_seconds":900},"grace_seconds":120,"retry_policy":{"name":"nexjob-retry","max_retries":2,"max_delays_seconds":[33,66]}}]}
}
