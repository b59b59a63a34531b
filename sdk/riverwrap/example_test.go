package riverwrap_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/riverwrap"
)

type invoiceArgs struct{}

func (invoiceArgs) Kind() string { return "nightly_invoices" }

// Make periodic jobs with monitors and install the Monitor as middleware.
func ExampleMonitor() {
	vigil := vigiltest.NewServer() // stands in for a Vigil server
	defer vigil.Close()

	client := sdk.New(vigil.URL(), sdk.WithAPIKey(vigiltest.APIKey), sdk.WithLogger(slog.New(slog.DiscardHandler)))
	mon := riverwrap.New(client.Source("billing-worker"), riverwrap.WithMaxAttempts(5))
	nightly, err := mon.PeriodicJob(riverwrap.Cron("CRON_TZ=Europe/Berlin 0 2 * * *"),
		sdk.Job{Slug: "nightly-invoices", Grace: 10 * time.Minute},
		func() (river.JobArgs, *river.InsertOpts) { return invoiceArgs{}, nil }, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	config := &river.Config{
		MaxAttempts:  5,
		Middleware:   []rivertype.Middleware{mon},
		RetryPolicy:  mon.RetryPolicy(nil), // River's default policy, shared with the Monitor
		PeriodicJobs: []*river.PeriodicJob{nightly},
		// Queues, Workers, ... as usual; then river.NewClient(driver, config).
	}
	_ = config

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := mon.Declare(ctx); err != nil {
		fmt.Println(err) // Vigil down: log it; Run keeps trying
	}
	go mon.Run(ctx) // declares again every 15 minutes
	// ... riverClient.Start(ctx)
	fmt.Println(string(vigil.Declarations()[0].Raw))
	// Output:
	// {"monitors":[{"name":"nightly-invoices","slug":"nightly-invoices","schedule":{"kind":"cron","expr":"0 2 * * *","tz":"Europe/Berlin","dialect":"robfig"},"grace_seconds":600,"retry_policy":{"name":"river-default","max_retries":4,"max_delays_seconds":[2,18,90,282]}}]}
}
