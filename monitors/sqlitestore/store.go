package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/vigilhq/vigil/migrations"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// Options configure a Store.
type Options struct {
	// Logger receives the store's warnings, such as a monitor that could not
	// be evaluated. Nil discards them.
	Logger *slog.Logger
	// EnqueueDeliveries, when set, adds the jobs that send the deliveries
	// each incident event creates, in the transaction that records it.
	EnqueueDeliveries EnqueueFunc
	// MaxMonitorsPerProject bounds the monitors of each project: a write
	// that would create more fails with a *monitors.LimitError. 0 or less
	// is no limit.
	MaxMonitorsPerProject int
	// Sealer, when set, encrypts channel configs at rest (secrets.Keyring);
	// without it they are stored as given, and an encrypted one cannot be
	// read.
	Sealer plan.Sealer
	// CheckpointInterval is how often the WAL is checkpointed, from a
	// connection of the store's own (see checkpoint.go). 0 is
	// CheckpointIntervalDefault; negative turns the timer off (tests that
	// checkpoint by hand).
	CheckpointInterval time.Duration
}

// busyTimeoutMS is how long a connection waits for a lock held by another
// connection (another process on the same file, or a checkpoint) before it
// fails with SQLITE_BUSY.
const busyTimeoutMS = 10000

// Store is a [monitors.Store] on a SQLite file.
type Store struct {
	// Scripts are the transaction scripts, run on this store.
	plan.Scripts

	path string
	// w is the one writer connection. Every transaction on it starts with
	// BEGIN IMMEDIATE (the _txlock=immediate DSN parameter), so it takes
	// SQLite's write lock at once instead of failing with SQLITE_BUSY when a
	// read transaction later tries to become a write one.
	w *sql.DB
	// r is a pool of read-only connections. In WAL mode readers do not
	// block the writer, and the writer does not block them.
	r *sql.DB

	// rStmts and wStmts keep the statements run on r and on w prepared.
	rStmts, wStmts *stmtCache

	// ckpt checkpoints the WAL, off the writer's commits.
	ckpt      *checkpointer
	stmts     *statements
	log       *slog.Logger
	enqueue   EnqueueFunc
	closeOnce sync.Once
	closeErr  error
}

var _ monitors.Store = (*Store)(nil)

// Open opens (creating it if needed) the SQLite database at path, applies
// pending migrations, and returns a Store on it.
//
// The database runs in WAL mode with synchronous=NORMAL: a commit is written
// to the WAL before it returns, so it survives a crash of the process, which
// is the promise ingest makes when it answers a ping. What NORMAL gives up
// against FULL is an fsync per commit: after a crash of the whole machine or
// a power loss, the last commits may be lost. That trade is what lets one
// file take thousands of pings a second; operators who need more run
// PostgreSQL.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("open sqlite: empty path")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := registerFuncs(); err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	file := "file:" + (&url.URL{Path: path}).EscapedPath()
	common := url.Values{}
	common.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	common.Add("_pragma", "foreign_keys(1)")

	wq := url.Values{}
	for k, v := range common {
		wq[k] = append([]string(nil), v...)
	}
	wq.Add("_pragma", "journal_mode(WAL)")
	wq.Add("_pragma", "synchronous(NORMAL)")
	// A 64 MiB page cache keeps the monitors and the recent history in
	// memory; no commit checkpoints (the checkpointer does, from its own
	// connection: checkpoint.go), nor cuts the WAL file (the checkpointer
	// does that too, when writes slow down); and the statement journals of
	// multi-row statements stay in memory instead of a temporary file.
	wq.Add("_pragma", "cache_size(-65536)")
	wq.Add("_pragma", "wal_autocheckpoint(0)")
	wq.Add("_pragma", "journal_size_limit(-1)")
	wq.Add("_pragma", "temp_store(MEMORY)")
	wq.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite", file+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// One writer: SQLite has one write lock per file anyway, and one
	// connection keeps the prepared statements warm.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := migrations.Up(ctx, w, migrations.SQLite); err != nil {
		w.Close()
		return nil, fmt.Errorf("migrate sqlite %s: %w", path, err)
	}

	rq := url.Values{}
	for k, v := range common {
		rq[k] = append([]string(nil), v...)
	}
	rq.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", file+"?"+rq.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite %s for reading: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)

	stmts, err := prepare(ctx, w)
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	s := &Store{path: path, w: w, r: r, stmts: stmts, log: log, enqueue: opts.EnqueueDeliveries}
	if s.rStmts, err = newStmtCache(r); err == nil {
		s.wStmts, err = newStmtCache(w)
	}
	if err != nil {
		stmts.close()
		r.Close()
		w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	interval := opts.CheckpointInterval
	if interval == 0 {
		interval = CheckpointIntervalDefault
	}
	cq := url.Values{}
	cq.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", restartWaitMS))
	cq.Add("_pragma", "wal_autocheckpoint(0)")
	ckpt, err := openCheckpointer(ctx, file+"?"+cq.Encode(), path+"-wal", interval, s)
	if err != nil {
		stmts.close()
		r.Close()
		w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	s.ckpt = ckpt
	s.Scripts = plan.Scripts{Driver: s, Q: &queries, Log: log, MaxMonitorsPerProject: opts.MaxMonitorsPerProject,
		Sealer: opts.Sealer}
	return s, nil
}

// createPrivate creates the database file at path, empty and readable by
// its owner only (0600), when it does not exist. SQLite would create it
// 0644, readable by every user of the machine, and the database holds the
// ping keys and the hashes of passwords and API keys. SQLite gives the WAL
// and shared-memory files (path-wal, path-shm) the mode of the database
// file, so they are 0600 too. An existing file keeps its mode: the
// operator chose it.
func createPrivate(path string) error {
	if path == ":memory:" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	return f.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("ping sqlite: %w", err)
	}
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("ping sqlite: %w", err)
	}
	return nil
}

// Close closes the database. It may be called more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.rStmts.close()
		s.wStmts.close()
		s.closeErr = errors.Join(s.ckpt.close(), s.stmts.close(), s.r.Close(), s.w.Close())
	})
	return s.closeErr
}

// EnqueueFunc adds the jobs that send deliveries. The store calls it in the
// transaction that records incident events, with the deliveries that
// transaction just created, so that an event, its deliveries and their jobs
// are committed together or not at all. An error aborts the transaction.
type EnqueueFunc func(ctx context.Context, tx *sql.Tx, ds []*monitors.Delivery) error

// DB returns the store's one writer connection, for River's client to
// share: River's writes then take turns with the store's instead of
// failing with SQLITE_BUSY.
func (s *Store) DB() *sql.DB { return s.w }
