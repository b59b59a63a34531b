package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

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
	// MaxConns, when positive, caps the connection pool that Open makes
	// (pgxpool's default is the larger of 4 and the number of CPUs, or
	// the URL's pool_max_conns).
	MaxConns int32
	// CheckPool, when set, runs once Open has connected and before it
	// migrates; an error stops Open. The server checks there that commits
	// are durable.
	CheckPool func(ctx context.Context, pool *pgxpool.Pool) error
}

// Store is a [monitors.Store] on PostgreSQL.
type Store struct {
	// Scripts are the transaction scripts, run on this store.
	plan.Scripts

	pool      *pgxpool.Pool
	ownPool   bool
	log       *slog.Logger
	enqueue   EnqueueFunc
	closeOnce sync.Once
	projects  projectsByKey // of the monitor ping keys batches loaded
}

var _ monitors.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string, as pgx accepts), applies pending migrations under an
// advisory lock, and returns a Store that owns its connection pool.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse postgres url: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if opts.CheckPool != nil {
		if err := opts.CheckPool(ctx, pool); err != nil {
			pool.Close()
			return nil, err
		}
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	s := New(pool, opts)
	s.ownPool = true
	// Pings must have a partition for this month and the next ones before
	// the first is taken; the prune loop keeps them ahead.
	if _, err := s.PingAge(ctx, time.Now(), time.Time{}); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// New returns a Store on pool, whose schema must be migrated already (see
// [Migrate]). The caller keeps ownership of pool: Close does not close it.
func New(pool *pgxpool.Pool, opts Options) *Store {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{pool: pool, log: log, enqueue: opts.EnqueueDeliveries}
	s.Scripts = plan.Scripts{Driver: s, Q: &queries, Log: log, MaxMonitorsPerProject: opts.MaxMonitorsPerProject,
		Sealer: opts.Sealer}
	return s
}

// Migrate applies pending migrations to the database of pool. Replicas that
// start together take turns under a PostgreSQL advisory lock.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	if err := migrations.Up(ctx, db, migrations.Postgres); err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	return nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping postgres: %w", err)
	}
	return nil
}

// Close closes the connection pool if Open made it. It may be called more
// than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.ownPool {
			s.pool.Close()
		}
	})
	return nil
}

// EnqueueFunc adds the jobs that send deliveries. The store calls it in the
// transaction that records incident events, with the deliveries that
// transaction just created, so that an event, its deliveries and their jobs
// are committed together or not at all. An error aborts the transaction.
type EnqueueFunc func(ctx context.Context, tx pgx.Tx, ds []*monitors.Delivery) error

// Pool returns the store's connection pool, for River's client to share.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }
