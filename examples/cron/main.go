// Command cron runs robfig/cron jobs monitored by Vigil.
//
//	VIGIL_URL=http://127.0.0.1:8080 VIGIL_API_KEY=… go run ./examples/cron
//
// It declares its jobs as the source "example-cron", reports every run, and
// stops on Ctrl-C, reporting a run cut short as cancelled.
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

	"github.com/robfig/cron/v3"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/cronwrap"
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
	// cronwrap reports a panic, then raises it again for cron.Recover.
	c := cron.New(cron.WithSeconds(), cron.WithChain(cron.Recover(cron.DefaultLogger)))
	s := cronwrap.New(c, client.Source("example-cron"))

	// Every minute; fails half the time and is retried twice, 10 s apart.
	_, err := s.Add("0 * * * * *", sdk.Job{
		Slug:        "flaky-sync",
		Grace:       30 * time.Second,
		MaxRuntime:  20 * time.Second,
		RetryPolicy: retry.QuartzFixed{MaxAttempts: 2, Interval: 10 * time.Second},
	}, syncPrices)
	if err != nil {
		logger.Error("add job", "error", err)
		return 1
	}
	// Every day at 02:00 Berlin time, with its max runtime as a deadline.
	_, err = s.Add("CRON_TZ=Europe/Berlin 0 0 2 * * *", sdk.Job{
		Slug: "nightly-report", Grace: 5 * time.Minute, MaxRuntime: time.Hour, RuntimeLimit: true,
	}, buildReport)
	if err != nil {
		logger.Error("add job", "error", err)
		return 1
	}
	// Runs, but is neither declared nor reported.
	if _, err := s.Add("@every 30s", sdk.Job{NoMonitor: true}, func(context.Context) error { return nil }); err != nil {
		logger.Error("add job", "error", err)
		return 1
	}

	logger.Info("running; Ctrl-C to stop")
	s.Start(ctx) // declares the jobs now and every 15 minutes, and starts cron
	<-ctx.Done() // cancelling ctx tells running jobs: reported as cancelled
	<-s.Stop().Done()
	return 0
}

// syncPrices stands for a job that fails one time in two.
func syncPrices(ctx context.Context) error {
	if rand.IntN(2) == 0 {
		return errors.New("supplier API answered 503")
	}
	return nil
}

// buildReport stands for a job's work: two seconds, less if ctx ends.
func buildReport(ctx context.Context) error {
	select {
	case <-time.After(2 * time.Second):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
