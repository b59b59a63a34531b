// Command basic reports runs of two jobs to Vigil with the SDK alone: one
// run addressed by its monitor's ping key, and one retried in place,
// addressed by slug and created on its first ping.
//
//	VIGIL_URL=http://127.0.0.1:8080 VIGIL_PING_KEY=… VIGIL_PROJECT_PING_KEY=… go run ./examples/basic
package main

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/retry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Getenv))
}

func run(ctx context.Context, getenv func(string) string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	client := sdk.New(getenv("VIGIL_URL"), sdk.WithLogger(logger))

	// One run: start, then success, fail with the error's text, or cancel
	// when ctx ends (Ctrl-C). Vigil being down never fails the job.
	err := client.Run(ctx, sdk.Key(getenv("VIGIL_PING_KEY")), func(ctx context.Context) error {
		return importOrders(ctx)
	})
	if err != nil {
		logger.Error("import failed", "error", err)
		return 1
	}

	// Retried in place, twice, 5 s apart. A failure that will be retried is
	// sent with its attempt and retry_in, so Vigil alerts only when the last
	// attempt fails. The monitor is made by its first ping.
	prices := sdk.Slug(getenv("VIGIL_PROJECT_PING_KEY"), "sync-prices").WithCreate()
	err = client.RunWithRetries(ctx, prices, syncPrices,
		sdk.WithRetryPolicy(retry.QuartzFixed{MaxAttempts: 2, Interval: 5 * time.Second}))
	if err != nil {
		logger.Error("sync failed", "error", err)
		return 1
	}
	return 0
}

// importOrders stands for a job's work: three seconds, less if ctx ends.
func importOrders(ctx context.Context) error {
	select {
	case <-time.After(3 * time.Second):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// syncPrices stands for a job that fails one time in two.
func syncPrices(ctx context.Context) error {
	if rand.IntN(2) == 0 {
		return errors.New("supplier API answered 503")
	}
	return nil
}
