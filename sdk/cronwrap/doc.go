// Package cronwrap monitors github.com/robfig/cron/v3 jobs with Vigil.
//
// Two ways in:
//
//   - [Wrap] is a cron.JobWrapper for an existing Cron: it pings start and
//     success for each run of the wrapped job, and fail when it panics,
//     before re-panicking. Monitors are created in Vigil by hand (or by
//     slug with create).
//   - A [Scheduler] adds jobs written as func(ctx) error with a schedule and
//     an [sdk.Job]: it declares their monitors (schedule, grace, max
//     runtime, deadline, retry policy) at start-up and every 15 minutes, so
//     a job removed from the code shows in Vigil as no longer discovered;
//     reports each run with its error text; retries failures in place by
//     the job's retry policy, announcing each retry so that only the final
//     failure alerts; and reports a run stopped by shutdown as cancelled,
//     not failed.
//
// Time zones: a spec's "CRON_TZ=Europe/Berlin " prefix, or the Cron's own
// location (cron.WithLocation), is declared as the monitor's tz.
//
// This is the only package of the SDK that imports robfig/cron.
package cronwrap
