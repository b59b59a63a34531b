// Package retry reproduces the retry policies of the job schedulers that
// Vigil's users run, so that a job can tell Vigil, on each failed attempt,
// whether and when its scheduler will try again, and declare the worst case
// of the whole retry chain up front.
//
// Each policy answers two questions:
//
//   - [Policy.Delay]: after execution n failed, how long until execution
//     n+1, or no retry at all. Randomness is injected through [Rand], so
//     tests are exact.
//   - [Policy.MaxDelays]: the longest each wait can be. Vigil uses it to know
//     how long to wait for an announced retry before calling it missed.
//
// The policies and their counting rules differ, and the differences matter:
//
//   - [Hangfire]: Attempts counts retries (10 retries, 11 runs by default);
//     delay (n-1)^4 + 15 + r*n seconds with r in 0..29, or DelaysInSeconds
//     with the last entry repeating.
//   - [NexJob]: Attempts counts total executions (10 by default, so 9
//     retries); the default curve a^4 + 15 + r*(a+1) seconds, or [Retry]'s
//     exponential backoff with ±10% jitter applied after the MaxDelay cap.
//   - [QuartzFixed], [QuartzExponential], [QuartzExplicit]: MaxAttempts
//     counts retries; exponential jitter is a factor in [1-j, 1+j) still
//     bounded by the ceiling; and a retry that would land at or within a
//     second of the trigger's next occurrence is dropped
//     ([OccurrenceBounded]).
package retry
