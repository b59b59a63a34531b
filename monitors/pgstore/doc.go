// Package pgstore is the [monitors.Store] on PostgreSQL, through pgx v5. It
// is the store for production and for running several replicas of Vigil
// against one database.
//
// # Replicas
//
// All state is in the database, and every change to a monitor is made under
// a lock on its row, in the transaction that writes its pings, runs,
// incidents and incident events:
//
//   - PingRecordBatch locks every monitor of a batch with one SELECT ...
//     FOR UPDATE, in ID order. Batches from several replicas that share
//     monitors therefore wait for each other instead of deadlocking.
//     Monitors that create=1 pings create are inserted in (project, slug)
//     order, each under a savepoint; one created meanwhile by another
//     replica is used as found.
//   - MonitorEvaluateDue claims due monitors with FOR UPDATE SKIP LOCKED:
//     evaluators on several replicas share the due monitors, none waits for
//     another, and no monitor is evaluated twice for one deadline.
//   - A partial unique index allows one open incident per monitor and
//     kind, and another one opened and one resolved event per incident.
//     Whatever the application does, two replicas cannot page twice.
//   - Open applies migrations under a PostgreSQL advisory lock, so replicas
//     that start together migrate one after the other.
//
// # The hot path
//
// The transaction scripts (package monitors/plan) decide; this store runs
// their statements. PingRecordBatch costs three round trips whatever the
// batch's size: one pipelined batch that resolves project ping keys, locks
// the monitors and reserves ping IDs; one pipelined batch that writes the
// pings (one INSERT from unnest of arrays), the monitors' states (one
// UPDATE ... FROM unnest), the runs (one upsert) and the incident changes;
// and the commit. A batch that records incident events takes two more, to
// read what routing needs and insert the deliveries; a batch that creates
// monitors one per creation. Statements are prepared and cached by pgx.
//
// # Time
//
// Times are timestamptz, written in UTC and read back in UTC, to the
// microsecond. A monitor's next deadline is rounded up to the microsecond,
// so that it is never claimed before it is due.
package pgstore
