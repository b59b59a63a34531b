// Package plan is the planning layer between Vigil's parts and its two
// stores. It runs every transaction script once: it loads what a batch of
// pings, a claim of due monitors or a person's change needs through narrow
// reads of a [Tx], applies the state machine of package monitors, and hands
// the store one [WriteSet] to write in the same transaction. It also routes
// the deliveries of the incident events a transaction records.
//
// The stores (pgstore, sqlitestore) implement [Driver] and [Tx]: each method
// is about one statement, or one pipelined or multi-row write, with the
// store's own SQL and locking. No store decides anything: what "late"
// means, which channels an event goes to, when an outage is recorded, what
// a created monitor defaults to, all live here or in package monitors.
// Embedding [Scripts] gives a store the methods of [monitors.Store] that
// are transaction scripts.
//
// The pure parts (routing, collecting runs, the effect of a delivery
// attempt, cleaning a ping) are plain functions, tested without a database;
// the scripts are proven on both stores by the conformance suite
// monitors/storetest.
package plan
