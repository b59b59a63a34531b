// Command river runs River periodic jobs on SQLite, monitored by Vigil.
//
//	VIGIL_URL=http://127.0.0.1:8080 VIGIL_API_KEY=… go run ./examples/river
//
// RIVER_DB names the SQLite file (default river-example.db). It declares
// its periodic job as the source "example-river" and reports every attempt.
package main

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	_ "modernc.org/sqlite"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/riverwrap"
)

type reportArgs struct{}

func (reportArgs) Kind() string { return "report" }

type reportWorker struct {
	river.WorkerDefaults[reportArgs]
}

func (reportWorker) Work(ctx context.Context, job *river.Job[reportArgs]) error {
	if rand.IntN(2) == 0 {
		return errors.New("report database is busy")
	}
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Getenv))
}

func run(ctx context.Context, getenv func(string) string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	db, err := sql.Open("sqlite", cmp.Or(getenv("RIVER_DB"), "river-example.db"))
	if err != nil {
		logger.Error("open database", "error", err)
		return 1
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // SQLite has one writer
	driver := riversqlite.New(db)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		logger.Error("migrator", "error", err)
		return 1
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		logger.Error("migrate", "error", err)
		return 1
	}

	client := sdk.New(getenv("VIGIL_URL"), sdk.WithAPIKey(getenv("VIGIL_API_KEY")), sdk.WithLogger(logger))
	mon := riverwrap.New(client.Source("example-river"), riverwrap.WithMaxAttempts(4))
	report, err := mon.PeriodicJob(riverwrap.Cron("* * * * *"), sdk.Job{Slug: "minute-report", Grace: time.Minute},
		func() (river.JobArgs, *river.InsertOpts) { return reportArgs{}, &river.InsertOpts{MaxAttempts: 4} },
		&river.PeriodicJobOpts{RunOnStart: true})
	if err != nil {
		logger.Error("periodic job", "error", err)
		return 1
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, &reportWorker{})
	riverClient, err := river.NewClient(driver, &river.Config{
		Logger:       logger,
		MaxAttempts:  4,
		Middleware:   []rivertype.Middleware{mon}, // reports every attempt
		RetryPolicy:  mon.RetryPolicy(nil),        // River's default, shared so retry_at is exact
		PeriodicJobs: []*river.PeriodicJob{report},
		PollOnly:     true,
		Queues:       map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		Workers:      workers,
	})
	if err != nil {
		logger.Error("river client", "error", err)
		return 1
	}

	// Declared before the start, so the first runs know their ping URLs.
	if err := mon.Declare(ctx); err != nil {
		logger.Warn("declare monitors; will try again", "error", err)
	}
	go mon.Run(ctx) // keeps the declaration current: now and every 15 minutes
	if err := riverClient.Start(ctx); err != nil {
		logger.Error("start river", "error", err)
		return 1
	}
	logger.Info("running; Ctrl-C to stop")
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := riverClient.Stop(stopCtx); err != nil {
		logger.Error("stop river", "error", err)
		return 1
	}
	return 0
}
