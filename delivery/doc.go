// Package delivery sends incident events to alert channels, durably and
// with retries, on River job queues that live in Vigil's own database.
//
// # From an incident to a message
//
// The store records an incident event (opened, updated, reminder, resolved)
// and, in the same transaction, one delivery per channel that the event goes
// to: the monitor's own channels, or its project's default channels when it
// names none. The store then calls its enqueue hook, still in that
// transaction, with the deliveries it created. The hook, from this package
// ([Enqueuer]), inserts one River job per delivery with River's
// InsertManyFastTx, which takes the driver's own transaction type (pgx.Tx on
// PostgreSQL, *sql.Tx on SQLite): that is why the hook sits inside each
// store implementation. An event, its deliveries and their jobs are
// committed together or not at all, so no alert is lost between the
// database and the queue, whatever crashes when.
//
//	store.write(tx) ── incident_events ── deliveries ── Enqueuer.Enqueue(tx) ── river_job
//	                                                                             │
//	Service (River client) ── worker.Work ── notifier.Notify (one attempt) ◀────┘
//	                              │
//	                              └── DeliveryAttemptRecord: delivery_attempts, deliveries.state
//
// # One attempt, then River
//
// The worker loads the delivery, its incident, monitor and channel, builds
// the [notifiers.Notification] and the channel's notifier (the same
// construction as [Service.TestChannel]) and makes one attempt, bounded by
// the attempt timeout. It logs the attempt in the store, then tells River
// what to do next:
//
//   - success: the delivery is sent; the job completes. A delivery that is
//     sent already is never sent again: the worker checks its state before
//     every attempt, and the store refuses a second outcome for it.
//   - a permanent error (a 4xx answer other than 408 and 429, a bad
//     configuration, a refused private address): the delivery failed; the
//     job is cancelled.
//   - anything else: the next attempt waits for the receiver's Retry-After
//     (429, 503) or else for an exponential backoff with jitter ([Backoff]),
//     unless that would fall after the retry window (a day by default,
//     counted from the event), in which case the delivery failed.
//
// Receivers that deduplicate get the incident id as their key (PagerDuty's
// dedup_key, Opsgenie's alias), so an attempt that timed out after the
// receiver accepted it cannot page twice when it is retried.
//
// # Order
//
// The deliveries of one incident to one channel go out in the order of
// their events: a delivery waits (River's snooze) while an earlier one to
// the same channel is still pending, so a recovery never arrives before the
// alert it ends, and PagerDuty never gets a trigger after its resolve.
//
// # Reminders
//
// With a reminder interval set, [Service.RemindOnce] (run periodically by
// [Service.Run]) records an incident.reminder event for every incident
// that has stayed open that long since it opened or was last reminded; its
// deliveries go the usual way. The interval is the operator's setting, for
// every channel alike. A channel that still has a delivery of the incident
// pending gets no reminder on top of it, so reminders do not pile up behind
// a receiver that is down.
//
// # SQLite
//
// SQLite has one writer. River's client on SQLite shares the store's one
// writer connection, so that River's writes take turns with the store's
// instead of failing with SQLITE_BUSY. SQLite has no LISTEN either: River's
// SQLite driver stands in for it with an outbox table that it polls.
package delivery
