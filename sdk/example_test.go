package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
	"github.com/vigilhq/vigil/sdk/retry"
)

// Report one run of a job: start, then success or fail with the error text.
func ExampleClient_Run() {
	vigil := vigiltest.NewServer() // stands in for a Vigil server
	defer vigil.Close()
	key := vigil.AddMonitor()

	client := sdk.New(vigil.URL())
	err := client.Run(context.Background(), sdk.Key(key), func(ctx context.Context) error {
		return errors.New("export: disk full")
	})
	fmt.Println("job error:", err)
	vigil.Print(os.Stdout)
	// Output:
	// job error: export: disk full
	// POST /ping/{key}/start?attempt=1&rid={rid}
	// POST /ping/{key}/fail?attempt=1&duration_ms={ms}&rid={rid} "export: disk full"
}

// Retry a job in place with Hangfire's policy: each failure that will be
// retried says when, so Vigil only alerts if the last attempt fails.
func ExampleClient_RunWithRetries() {
	vigil := vigiltest.NewServer()
	defer vigil.Close()
	key := vigil.AddMonitor()

	client := sdk.New(vigil.URL(),
		// Tests and examples do not wait; programs leave the default.
		sdk.WithSleepFunc(func(ctx context.Context, d time.Duration) error {
			fmt.Println("wait", d)
			return nil
		}))
	attempts := 0
	err := client.RunWithRetries(context.Background(), sdk.Key(key), func(ctx context.Context) error {
		if attempts++; attempts < 3 {
			return errors.New("supplier API: 503")
		}
		return nil
	}, sdk.WithRetryPolicy(retry.Hangfire{Attempts: 3, DelaysInSeconds: []int{30, 120, 600}}))
	fmt.Println("job error:", err)
	vigil.Print(os.Stdout)
	// Output:
	// wait 30s
	// wait 2m0s
	// job error: <nil>
	// POST /ping/{key}/start?attempt=1&rid={rid}
	// POST /ping/{key}/fail?attempt=1&duration_ms={ms}&retry_in=30&rid={rid} "supplier API: 503"
	// POST /ping/{key}/start?attempt=2&rid={rid}
	// POST /ping/{key}/fail?attempt=2&duration_ms={ms}&retry_in=120&rid={rid} "supplier API: 503"
	// POST /ping/{key}/start?attempt=3&rid={rid}
	// POST /ping/{key}?attempt=3&duration_ms={ms}&rid={rid}
}

// Declare the monitors of an application, then ping them by the URLs Vigil
// returns.
func ExampleClient_Declare() {
	vigil := vigiltest.NewServer()
	defer vigil.Close()

	client := sdk.New(vigil.URL(), sdk.WithAPIKey(vigiltest.APIKey), sdk.WithLogger(slog.New(slog.DiscardHandler)))
	declared, err := client.Declare(context.Background(), "billing-service", []sdk.MonitorSpec{{
		Slug:         "nightly-invoices",
		Schedule:     sdk.Cron("0 2 * * *", "Europe/Berlin"),
		GraceSeconds: 600,
		RetryPolicy:  sdk.RetrySpec(retry.HangfireDefault()),
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(vigil.Declarations()[0].Raw))
	_ = client.Ping(context.Background(), declared[0].Monitor(), sdk.KindSuccess, nil)
	vigil.Print(os.Stdout)
	// Output:
	// {"monitors":[{"slug":"nightly-invoices","schedule":{"kind":"cron","expr":"0 2 * * *","tz":"Europe/Berlin"},"grace_seconds":600,"retry_policy":{"name":"hangfire-default","max_retries":10,"max_delays_seconds":[44,74,118,212,416,814,1514,2648,4372,6866]}}]}
	// POST /ping/{key}
}
