// Package sdk is Vigil's Go client: it reports runs of scheduled jobs to a
// Vigil server (or any server that speaks the Healthchecks.io ping
// protocol), declares monitors from code, and understands retries. It uses
// the standard library only.
//
// # Reporting a run
//
// A monitor is addressed by its ping key, by its project's ping key and its
// slug, or by the ping URL a declaration returned:
//
//	client := sdk.New("https://vigil.example.com")
//	m := sdk.Key("5f0b2c8e-…")                                 // /ping/{key}
//	m = sdk.Slug(projectPingKey, "nightly-import").WithCreate() // /ping/{project key}/{slug}?create=1
//
//	err := client.Run(ctx, m, func(ctx context.Context) error {
//		return importEverything(ctx)
//	})
//
// [Client.Run] sends start with a fresh run id, then success, or fail with
// the error text, with the run's duration; a panic is reported and
// re-panicked; a job that returns because ctx was cancelled (the host is
// shutting down) is reported as cancel, which alerts no one. The job's own
// error is returned unchanged.
//
// A monitor created by its first ping can bring its schedule with it
// ([Monitor.WithSettings]); [Monitor.WithUpdate] also changes an existing
// monitor to those settings:
//
//	m = m.WithSettings(sdk.Settings{Schedule: "0 2 * * *", TZ: "Europe/Berlin", Grace: 10 * time.Minute})
//
// For finer control, [Client.Start] returns a [Run] whose methods send the
// finishing ping, and [Client.Ping] sends any single ping.
//
// # Retries
//
// Vigil alerts, by default, only on a final failure: one that the job's
// scheduler will not retry. A failed attempt that will be retried is sent as
// fail with attempt=n and retry_in (or retry_at), and Vigil waits for the
// retry instead of paging. [WithRetryPolicy] tells Run how the job's
// scheduler retries (the policies of package retry reproduce Hangfire,
// NexJob, Quartz and River), and [WithAttempt] which attempt this is.
// [Client.RunWithRetries] retries the job itself:
//
//	err := client.RunWithRetries(ctx, m, syncPrices,
//		sdk.WithRetryPolicy(retry.Hangfire{Attempts: 3, DelaysInSeconds: []int{30, 120, 600}}))
//
// An error marked with [Permanent] is final at once.
//
// # Vigil being slow or down
//
// Monitoring never breaks or holds up a job for long. Each request is
// bounded by [WithTimeout] (10 s) and tried 1 + [WithRetries] (2) times with
// a 0.25 s, then 0.5 s backoff: at worst 30.75 s for one ping, about 0.75 s
// when Vigil refuses connections. Run sends the start ping in the
// background, so the job starts at once, and sends the finish only after
// the start, so they arrive in order. Failures to reach Vigil are logged
// ([WithLogger], default slog.Default()) and never returned as the job's
// error.
//
// # Declaring monitors
//
// [Client.Declare] sends the complete set of monitors of one source (an
// application, a scheduler) with their schedules, grace, max runtime,
// deadline and retry policy; Vigil creates, updates, and marks as
// undeclared those the source stopped declaring. Vigil's advice about a
// monitor's settings (a retry chain longer than the gap between runs, a
// grace so long that a missed run goes unreported) comes back with the
// declaration and with each ping's answer; the client logs each warning
// once, at warning level. A [Source] keeps that set,
// re-declares it every 15 minutes ([Source.Run]) and hands out each job's
// ping URL. The scheduler integrations build on it:
//
//   - sdk/cronwrap: github.com/robfig/cron/v3
//   - sdk/gocronwrap: github.com/go-co-op/gocron/v2
//   - sdk/riverwrap: github.com/riverqueue/river
//   - sdk/command: `vigil run -- COMMAND`, for anything else.
//
// # Errors
//
// Calls return errors that wrap [ErrNotFound], [ErrUnauthorized],
// [ErrBadRequest], [ErrRateLimited], [ErrUnavailable] or [ErrInvalid]; check
// them with errors.Is. Ping keys never appear in errors or logs.
package sdk
