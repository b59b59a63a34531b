package server

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/migrations"
	"github.com/vigilhq/vigil/monitors"
)

// IsPostgresURL reports whether url names a PostgreSQL database rather than
// a SQLite file.
func IsPostgresURL(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// SQLitePath returns the file path of a SQLite database URL: a plain path,
// or one written as sqlite://path or file:path.
func SQLitePath(url string) string {
	for _, p := range []string{"sqlite://", "sqlite:", "file:"} {
		if strings.HasPrefix(url, p) {
			return strings.TrimPrefix(url, p)
		}
	}
	return url
}

// DatabaseSettings configures how "vigil serve" uses its database.
type DatabaseSettings struct {
	// MaxConns caps the PostgreSQL connection pool of this process; 0 sizes
	// it from the parts that share it (see PoolSize), unless the URL sets
	// pool_max_conns.
	MaxConns int
	// AllowAsyncCommit lets Vigil start on a PostgreSQL whose commits are
	// not flushed before they return (synchronous_commit=off, fsync=off),
	// where an acknowledged ping can be lost in a crash of the database.
	AllowAsyncCommit bool
}

// OpenStore opens (and migrates) the store that url names, with the queue
// of notifications (see openPostgres and openSQLite in delivery.go). It is
// for commands that do not serve: the pool is pgx's default size, and
// commit durability is not checked.
func OpenStore(ctx context.Context, url string, logger *slog.Logger) (monitors.Store, error) {
	s, _, err := openStore(ctx, url, logger, nil, storeLimits{})
	return s, err
}

// openStore opens the store, and returns it with the delivery queue on its
// database; with pg set (the server's), the pool is sized by it and
// commits are checked for durability before migrating.
func openStore(ctx context.Context, url string, logger *slog.Logger, pg *pgOptions, lim storeLimits) (monitors.Store, deliveryQueue, error) {
	if IsPostgresURL(url) {
		s, q, err := openPostgres(ctx, url, logger, pg, lim)
		if err != nil {
			return nil, nil, fmt.Errorf("open postgres store: %w", err)
		}
		return s, q, nil
	}
	s, q, err := openSQLite(ctx, SQLitePath(url), logger, lim)
	if err != nil {
		return nil, nil, fmt.Errorf("open sqlite store %s: %w", SQLitePath(url), err)
	}
	return s, q, nil
}

// pgOptions are the server's choices for its PostgreSQL pool.
type pgOptions struct {
	maxConns         int32 // 0: the URL's pool_max_conns, or pgx's default
	allowAsyncCommit bool
	logger           *slog.Logger
}

// Parts of one process that hold PostgreSQL connections, beside the ingest
// writers, the evaluator's claims and the delivery workers (see PoolSize).
const (
	// poolRiver is River's: its LISTEN connection, held for good, and its
	// producer's fetches and completions.
	poolRiver = 2
	// poolRequests is for what HTTP requests read and write outside the
	// ingest writer (the API, the dashboard, /readyz), and pruning.
	poolRequests = 4
)

// PoolSize returns the PostgreSQL connection pool a process sizes for
// itself when VIGIL_DB_MAX_CONNS is 0: one connection for each part that
// may hold one at the same moment, so that no part waits for another's:
// the ingest writers (each writes one batch at a time), the evaluator's
// claims, the delivery workers (each records its attempt), River's own, and
// those of requests and pruning. With the defaults on PostgreSQL this is
// 2 + 2 + 20 + 2 + 4 = 30.
func (c *Config) PoolSize() int {
	return c.ingestWriters() + c.evaluatorWorkers() + cmp.Or(c.Delivery.Workers, delivery.WorkersDefault) + poolRiver + poolRequests
}

// postgresOptions returns the server's pool options from its settings. An
// explicit VIGIL_DB_MAX_CONNS wins; then the URL's pool_max_conns; then
// PoolSize.
func (c *Config) postgresOptions(logger *slog.Logger) *pgOptions {
	o := &pgOptions{allowAsyncCommit: c.Database.AllowAsyncCommit, logger: logger}
	switch {
	case c.Database.MaxConns > 0:
		o.maxConns = int32(c.Database.MaxConns)
	case strings.Contains(c.DatabaseURL, "pool_max_conns"):
	default:
		o.maxConns = int32(c.PoolSize())
	}
	return o
}

// errAsyncCommit is returned at start when acknowledged pings would not be
// durable.
var errAsyncCommit = errors.New("server: commits on this database are not durable")

// checkDurability refuses a database where a commit can return before it
// is on disk (synchronous_commit=off, or fsync=off): Vigil acknowledges a
// ping once its transaction commits, and such a commit is lost in a crash
// of PostgreSQL. allow (VIGIL_ALLOW_ASYNC_COMMIT) turns the refusal into a
// warning. A commit that waits only for the local disk while synchronous
// standbys are configured (synchronous_commit=local) is durable but may be
// lost in a failover: a warning.
func checkDurability(ctx context.Context, pool *pgxpool.Pool, allow bool, logger *slog.Logger) error {
	var syncCommit, fsync, standbys string
	err := pool.QueryRow(ctx, `SELECT current_setting('synchronous_commit'), current_setting('fsync'),
		current_setting('synchronous_standby_names')`).Scan(&syncCommit, &fsync, &standbys)
	if err != nil {
		return fmt.Errorf("read commit settings: %w", err)
	}
	var problem string
	switch {
	case fsync == "off":
		problem = "fsync is off"
	case syncCommit == "off":
		problem = "synchronous_commit is off"
	}
	if problem != "" {
		if !allow {
			return fmt.Errorf("%w: %s, so a ping acknowledged with 200 can be lost if PostgreSQL crashes; "+
				"turn it on (ALTER DATABASE ... SET synchronous_commit = on, or in postgresql.conf), "+
				"or start with --allow-async-commit (VIGIL_ALLOW_ASYNC_COMMIT=true) to accept the risk", errAsyncCommit, problem)
		}
		logger.Warn("acknowledged pings are not durable: a crash of PostgreSQL can lose the last of them; allowed by VIGIL_ALLOW_ASYNC_COMMIT",
			"synchronous_commit", syncCommit, "fsync", fsync)
		return nil
	}
	if syncCommit == "local" && standbys != "" {
		logger.Warn("commits do not wait for the synchronous standbys (synchronous_commit=local): a failover can lose the last acknowledged pings",
			"synchronous_standby_names", standbys)
	}
	return nil
}

// MigrationStatus lists the migrations of the database that url names,
// Vigil's and then those of the notification queue (River's, named
// river/NNN_name), and whether each has been applied, without applying or
// writing anything.
func MigrationStatus(ctx context.Context, url string) ([]migrations.MigrationStatus, error) {
	driver, dsn, dialect := "sqlite", SQLitePath(url), migrations.SQLite
	if IsPostgresURL(url) {
		driver, dsn, dialect = "pgx", url, migrations.Postgres
	} else if _, err := os.Stat(dsn); errors.Is(err, fs.ErrNotExist) {
		// Opening would create the file: an empty database has every
		// migration pending.
		dsn = ":memory:"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	defer db.Close()
	st, err := migrations.Status(ctx, db, dialect)
	if err != nil {
		return nil, err
	}
	var river []migrations.MigrationStatus
	if dialect == migrations.Postgres {
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("connect to postgres: %w", err)
		}
		defer pool.Close()
		river, err = delivery.RiverStatusPostgres(ctx, pool)
		if err != nil {
			return nil, err
		}
	} else {
		river, err = delivery.RiverStatusSQLite(ctx, db)
		if err != nil {
			return nil, err
		}
	}
	return append(st, river...), nil
}
