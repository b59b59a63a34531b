// Package ingest receives pings: the /ping/... endpoints of PROTOCOL.md §1,
// compatible with Healthchecks.io's ping API.
//
// # A request
//
// A ping request goes through four steps, each of which can refuse it with
// a short plain-text answer and store nothing:
//
//  1. The URL is parsed (parse.go): the monitor, by ping key (a UUID) or by
//     project ping key and slug; the kind, from the suffix; and the query
//     parameters, each checked against its documented limit. A bad one is
//     400 with a sentence naming it. With create=1 or update=1, the
//     monitor settings the ping carries (schedule, tz, dialect, every,
//     grace, max_runtime) are judged here too, by manage.PingSettings on a
//     monitor with the defaults, as the API judges a new monitor's; an
//     update=1 then goes to the writer as the ping's Update, applied in the
//     ping's transaction under the monitor's lock.
//  2. The key's rate is checked (limit.go): a token bucket per key, before
//     any database work, so a flood from one job, or from made-up keys,
//     costs the database nothing. Over the limit: 429 with Retry-After.
//  3. The body is read: the first Config.BodyLimit bytes are kept, the rest
//     is dropped and the ping flagged; past Config.BodyHardLimit: 413.
//  4. The ping is handed to the writer, and the request waits for its
//     result. 200 (or 201 when create=1 made the monitor) is sent only once
//     the ping is committed.
//
// # Group commit
//
// The writer (writer.go) gathers the pings of concurrent requests into
// batches and writes each batch with one Store.PingRecordBatch call: one
// transaction, in which each ping goes through the state machine in order.
// A ping that finds the writer idle starts a batch, which is cut at
// Config.BatchSize pings, or Config.BatchWindow after its first ping,
// whichever comes first, and with Config.QuietCut (the server's choice on
// SQLite) once no ping has arrived for a sixteenth of the window. (Under
// load, a batch's clients come back as a burst once the batch before is
// answered: waiting out the window after the burst has ended keeps them
// waiting and the writer idle.) Pings that arrive while a batch is being
// written go into the next one. Without a quiet cut (PostgreSQL) it is
// written as soon as that batch is done, with no window: its pings have
// waited for a write already, and under load the writer then writes one
// batch while the clients of the other are answered and come back, instead
// of waiting for all of them in one. With a quiet cut it waits for that
// quiet like any batch (on SQLite, writing it at once measured no faster
// and cost more CPU a ping). The cost of a commit (an fsync on PostgreSQL,
// a WAL append on SQLite) is then shared by every ping of the batch, and
// throughput is bounded by how fast the database writes batches.
//
//	request ─┐                    ┌─ batch ─▶ PingRecordBatch (one tx) ─┐
//	request ─┼─▶ queue (by key) ──┤                                     ├─▶ each request gets its result
//	request ─┘                    └─ next batch fills while this one is written
//
// Pings are spread over Config.Writers queues by key, and each queue is
// written by one goroutine, one batch after another: the pings of one key
// are stored in the order they arrived. With several writers, batches of
// different keys overlap (on PostgreSQL, the rows they lock are disjoint).
//
// A batch that fails as a whole (an error no single result carries: a
// value the database refuses, say) is split in halves, each written on its
// own, recursively, so that only the guilty ping fails and the innocent
// ones are stored. When the database does not answer at all, splitting
// cannot help and the batch fails at once.
//
// Config.BatchSize 1 turns group commit off: each request writes its own
// transaction as it arrives. That is the baseline "vigil bench ingest"
// measures group commit against.
//
// # Shutdown
//
// Run's context should end after the HTTP server has stopped taking
// requests: the writer then writes out what is queued and returns. A
// request that still arrives is answered 503 and not stored.
package ingest
