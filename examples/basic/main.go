// Command basic reports one job run to Vigil with the SDK alone.
//
//	VIGIL_URL=http://127.0.0.1:8080 VIGIL_PING_KEY=… go run ./examples/basic
package main

import (
	"context"
	"log/slog"
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
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	client := sdk.New(os.Getenv("VIGIL_URL"), sdk.WithLogger(logger))

	// Start, then success, fail (retried twice, 5 s apart, announced to
	// Vigil) or cancel on Ctrl-C. Vigil being down never fails the job.
	err := client.RunWithRetries(ctx, sdk.Key(os.Getenv("VIGIL_PING_KEY")), func(ctx context.Context) error {
		logger.Info("working for 3 seconds")
		select {
		case <-time.After(3 * time.Second):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, sdk.WithRetryPolicy(retry.QuartzFixed{MaxAttempts: 2, Interval: 5 * time.Second}))
	if err != nil {
		logger.Error("job failed", "error", err)
		os.Exit(1)
	}
}
