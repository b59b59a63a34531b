// Package gocronwrap monitors github.com/go-co-op/gocron/v2 jobs with
// Vigil.
//
// A [Scheduler] wraps a gocron.Scheduler. Jobs are added with a [Schedule]
// ([Cron] or [Every]), an [sdk.Job] describing the monitor, and a
// func(ctx) error; the Scheduler declares their monitors at start-up and
// every 15 minutes (so a removed job shows as no longer discovered), reports
// each run with a run id, retries failures by the job's retry policy while
// announcing each retry (so only a final failure alerts), and reports a run
// stopped by Shutdown as cancelled.
//
// [Listeners] reports an existing job through gocron's event listeners,
// without run ids.
package gocronwrap
