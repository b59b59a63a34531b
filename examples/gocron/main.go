// Command gocron runs go-co-op/gocron jobs monitored by Vigil.
//
//	VIGIL_URL=http://127.0.0.1:8080 VIGIL_API_KEY=… go run ./examples/gocron
//
// It declares its jobs as the source "example-gocron", reports every run,
// and stops on Ctrl-C, reporting a run cut short as cancelled.
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

	"github.com/go-co-op/gocron/v2"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/gocronwrap"
	"github.com/vigilhq/vigil/sdk/retry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Getenv))
}

func run(ctx context.Context, getenv func(string) string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	client := sdk.New(getenv("VIGIL_URL"), sdk.WithAPIKey(getenv("VIGIL_API_KEY")), sdk.WithLogger(logger))
	gs, err := gocron.NewScheduler(gocron.WithLocation(time.UTC))
	if err != nil {
		logger.Error("new scheduler", "error", err)
		return 1
	}
	s := gocronwrap.New(gs, client.Source("example-gocron"), gocronwrap.WithLocation(time.UTC))

	// Every minute; retried up to twice with NexJob's backoff.
	_, err = s.NewJob(gocronwrap.Every(time.Minute), sdk.Job{
		Slug:        "price-sync",
		Grace:       30 * time.Second,
		RetryPolicy: retry.NexJob{Attempts: 3, InitialDelay: 5 * time.Second, MaxDelay: 20 * time.Second},
	}, syncPrices)
	if err != nil {
		logger.Error("add job", "error", err)
		return 1
	}
	// Every day at 03:00 UTC.
	_, err = s.NewJob(gocronwrap.Cron("0 3 * * *", false), sdk.Job{Slug: "cleanup", Grace: 10 * time.Minute},
		func(ctx context.Context) error { return nil })
	if err != nil {
		logger.Error("add job", "error", err)
		return 1
	}

	// Declared before the start, so the first runs know their ping URLs;
	// Start declares again every 15 minutes.
	if err := s.Declare(ctx); err != nil {
		logger.Warn("declare monitors; will try again", "error", err)
	}
	logger.Info("running; Ctrl-C to stop")
	s.Start(ctx)
	<-ctx.Done()
	// Shutdown cancels running jobs' contexts: they are reported as cancelled.
	err = s.Shutdown()
	if err != nil {
		logger.Error("shutdown", "error", err)
		return 1
	}
	return 0
}

// syncPrices stands for a job that fails one time in three.
func syncPrices(ctx context.Context) error {
	if rand.IntN(3) == 0 {
		return errors.New("timeout talking to the supplier")
	}
	return nil
}
