// Package evaluator runs the clock-driven loop that finds due monitors and
// applies the passing of time to them: missed occurrences and retries,
// stuck runs, deadlines.
//
// # A pass
//
// Each pass of [Evaluator.RunOnce]:
//
//  1. stamps the heartbeat shared by every evaluator in the database
//     ([monitors.Store.EvaluatorHeartbeat]), which tells whether Vigil itself
//     was down;
//  2. claims due monitors in batches ([monitors.Store.MonitorEvaluateDue])
//     until a batch comes back short: each batch is one transaction that
//     locks the monitors, applies the time with [monitors.ApplyTime], and
//     writes their new state and next deadline, the runs and incidents that
//     result, and one incident event per incident transition, which
//     delivery turns into notifications. A backlog that lasts longer than
//     PollInterval stays in the pass; its claims stamp the heartbeat again
//     every PollInterval, so a long backlog is not taken for an outage;
//  3. reads the earliest next deadline of any monitor
//     ([monitors.Store.MonitorNextDeadline]), for the lag metric and to know
//     when to wake.
//
// [Evaluator.Run] repeats passes until its context is done. It starts the
// next pass when the earliest deadline comes (but no sooner than 50ms
// after the last pass, so that deadlines a few milliseconds apart share one
// transaction), and at least every PollInterval (at most a second), since
// ingest and the API move deadlines.
//
// While a burst lasts (a claim locked a full batch), Config.Workers claims
// run at once, each locking a batch of its own; vigil serve runs two on
// PostgreSQL. The others start as soon as the pass's first claim has locked
// its full batch, while it is still being evaluated and written, not after
// its commit.
//
// # Cost
//
// Claims read the due index, of unpaused monitors by next deadline (on
// PostgreSQL monitor_deadlines_due_idx, on a table of its own so that a
// ping's update of its monitor is HOT; on SQLite monitors_due_idx): a pass costs in proportion to the monitors that are due, not to
// the monitors there are. An idle Vigil with a million monitors runs two
// index look-ups and one heartbeat update a second per replica.
//
// # Replicas
//
// Any number of evaluators, in any number of "vigil serve" processes, share
// one PostgreSQL database. Claims take FOR UPDATE SKIP LOCKED, so each
// evaluator passes over the monitors another holds, and a monitor is
// evaluated once per deadline. The database itself refuses a second open
// incident of a kind for a monitor, and a second opened or resolved event
// for an incident. On SQLite, one process owns the file and its one writer
// serializes claims.
//
// # Vigil's own downtime
//
// While Vigil is down, pings sent to it are lost. When it comes back, the
// monitors whose deadlines fell inside the gap may well have run: alerting
// for all of them at once would page everyone for nothing. So when a pass
// finds the heartbeat older than OutageThreshold (default a minute), it
// records an outage from the last heartbeat to now, logs it, counts it in
// vigil_outages_total, and passes its bounds as [monitors.TimeOptions] to
// every claim until no monitor due inside it is left. Those monitors get a
// fresh grace window from the end of the outage; if they still do not ping,
// their incidents open when it runs out. The outage, with the number of
// monitors it postponed, is kept and listed by [monitors.Store.OutageList].
// An evaluator that lags, because the database was unreachable or a pass
// took too long, leaves the same gap and is treated the same way.
//
// # Reports
//
// Beside its passes, Run looks for the reports due once a ReportInterval
// (a minute) and at start ([Evaluator.ReportOnce]): for every channel with
// a report, the last complete week or month (in UTC) that it has not got
// yet. It makes the report from the project's history and claims it with
// [monitors.Store.ReportClaim], which stores the report and its delivery
// in one transaction under a unique key per channel and period: of
// replicas that claim at once, one wins and the others get ErrConflict,
// so a report is sent once; a claim lost to a crash was never committed
// and is made again. After an outage the missed period is claimed by the
// first look; periods older than the last complete one are not sent, and
// are logged as skipped.
//
// # Time
//
// The clock is Config.NowFunc. Tests call RunOnce with a clock they move by
// hand; Run sleeps on real timers for durations computed from that clock.
package evaluator
