// Package riverwrap monitors github.com/riverqueue/river jobs with Vigil.
//
// A [Monitor] is a River worker middleware: install it in
// river.Config.Middleware, and give River its retry policy wrapper so both
// agree on when a retry runs:
//
//	mon := riverwrap.New(client.Source("billing-worker"))
//	cfg := &river.Config{
//		Middleware:   []rivertype.Middleware{mon},
//		RetryPolicy:  mon.RetryPolicy(nil), // nil: River's default policy
//		PeriodicJobs: []*river.PeriodicJob{nightly},
//		...
//	}
//
// Each attempt of a monitored job is reported with River's attempt number:
// start, then success, or a fail that carries retry_at (River's next
// scheduled retry) while attempts remain, so Vigil alerts only on the final
// failure (the last attempt, river.JobCancel, or a remote cancel). A job
// that River stops because the client shuts down, or that snoozes, is
// reported as cancelled: River runs it again without counting the attempt.
//
// Periodic jobs made with [Monitor.PeriodicJob] are declared as monitors
// with their schedule ([Cron], [Interval]) and River's retry policy;
// [Monitor.Run] declares them at start-up and every 15 minutes, so a
// periodic job removed from the code shows as no longer discovered. Other
// job kinds can be monitored with [Monitor.Watch]. A job with
// sdk.Job.NoMonitor runs as usual and is neither declared nor reported.
//
// River's own JobTimeout (one minute by default) still bounds each attempt;
// sdk.Job.RuntimeLimit adds MaxRuntime as a deadline of its own.
package riverwrap
