// Package sqlitestore is the [monitors.Store] on a SQLite file, through the
// pure Go modernc.org/sqlite. It is the embedded default: Vigil runs on a
// fresh machine with nothing else installed.
//
// # Connections
//
// SQLite has one write lock per file, so the store has one writer
// connection, on which every transaction begins IMMEDIATE (taking the write
// lock at once, instead of failing with SQLITE_BUSY when a read turns into
// a write), and a separate pool of read-only connections. In WAL mode,
// readers and the writer do not block each other.
//
// Where PostgreSQL locks rows (FOR UPDATE, SKIP LOCKED), this store needs
// nothing: a write transaction holds the only write lock until it commits,
// so whatever it read cannot change under it, and two evaluators cannot
// claim the same monitor.
//
// # Durability
//
// The file is in WAL mode with synchronous=NORMAL. A commit has reached the
// WAL, in the operating system's hands, before it returns: it survives a
// crash or kill of the Vigil process, which is what ingest promises when it
// answers a ping. A crash of the whole machine or a power loss may lose the
// last commits, since NORMAL does not fsync each one; FULL would, at the
// cost of an fsync per batch. Deployments that need more run PostgreSQL.
//
// # Storage
//
// Times are INTEGER microseconds since the Unix epoch, in UTC: compared
// and indexed as plain integers, with the precision of PostgreSQL's
// timestamptz, so both stores keep the same instants. A monitor's next
// deadline is rounded up to the microsecond, so that it is never claimed
// before it is due. Tags, channels, the retry policy and the state are JSON
// text; tag filters match exactly, through json_each.
package sqlitestore
