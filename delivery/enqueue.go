package delivery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/vigilhq/vigil/migrations"
	"github.com/vigilhq/vigil/monitors"
)

// QueueName is the River queue of delivery jobs.
const QueueName = "vigil_delivery"

// ReportQueueName is the River queue of the delivery jobs of reports. A
// queue of its own, so that during a rolling upgrade a binary older than
// reports, which works QueueName only and could not read a report's
// delivery, never takes one (it would drop it as gone).
const ReportQueueName = "vigil_reports"

// reportWorkers is how many reports one process sends at once: a few a
// week per channel, never urgent.
const reportWorkers = 2

// maxAttempts is River's bound on a delivery job's attempts. The retry
// window is what ends retrying; this is only a backstop for a window so
// long, or a backoff so short, that attempts would never end.
const maxAttempts = 1000

// SendArgs are a delivery job's arguments. The delivery row holds
// everything else; the other fields make the job readable in River's
// tables.
type SendArgs struct {
	ProjectID  string `json:"project_id"`
	DeliveryID int64  `json:"delivery_id"`
	IncidentID string `json:"incident_id"`
	ChannelID  string `json:"channel_id"`
	Event      string `json:"event"`
}

// Kind is the River job kind of deliveries.
func (SendArgs) Kind() string { return "vigil.delivery" }

// Enqueuer inserts delivery jobs in a store's transaction. Its Enqueue
// method is the store's enqueue hook (pgstore.Options.EnqueueDeliveries,
// sqlitestore.Options.EnqueueDeliveries). It needs no database of its own:
// River's InsertManyFastTx works on the transaction it is given.
type Enqueuer[TTx any] struct {
	client *river.Client[TTx]
}

// NewPostgresEnqueuer returns the enqueue hook of pgstore.
func NewPostgresEnqueuer() (*Enqueuer[pgx.Tx], error) {
	return newEnqueuer[pgx.Tx](riverpgxv5.New(nil))
}

// NewSQLiteEnqueuer returns the enqueue hook of sqlitestore.
func NewSQLiteEnqueuer() (*Enqueuer[*sql.Tx], error) {
	return newEnqueuer[*sql.Tx](riversqlite.New(nil))
}

func newEnqueuer[TTx any](driver riverdriver.Driver[TTx]) (*Enqueuer[TTx], error) {
	// An insert-only client: no queues, no workers, no pool.
	client, err := river.NewClient(driver, &river.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("new river client for inserts: %w", err)
	}
	return &Enqueuer[TTx]{client: client}, nil
}

// Enqueue inserts one job per delivery in tx. The jobs go in without
// returning their rows (COPY on PostgreSQL): nothing reads them back, and
// a delivery job is never unique, so there is no conflict to report.
func (e *Enqueuer[TTx]) Enqueue(ctx context.Context, tx TTx, ds []*monitors.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(ds))
	for i, d := range ds {
		params[i] = river.InsertManyParams{
			Args: SendArgs{ProjectID: d.ProjectID, DeliveryID: d.ID, IncidentID: d.IncidentID, ChannelID: d.ChannelID,
				Event: string(d.Event)},
			InsertOpts: &river.InsertOpts{Queue: queueOf(d), MaxAttempts: maxAttempts},
		}
	}
	if _, err := e.client.InsertManyFastTx(ctx, tx, params); err != nil {
		return fmt.Errorf("insert %d delivery jobs: %w", len(ds), err)
	}
	return nil
}

// queueOf is the River queue of delivery d's job.
func queueOf(d *monitors.Delivery) string {
	if d.ReportID != "" {
		return ReportQueueName
	}
	return QueueName
}

// MigratePostgres applies River's migrations to the database of pool, in
// the schema of its search_path. Replicas that start together take turns
// under an advisory lock of that schema, held on a connection of its own:
// River applies each migration in a transaction of its own, as some of them
// must (an enum value is added, then used).
func MigratePostgres(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quiet(logger)})
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	defer conn.Release()
	const key = `hashtextextended('vigil river migrations ' || current_schema(), 0)`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+key+`)`); err != nil {
		return fmt.Errorf("migrate river: lock: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+key+`)`); err != nil {
			// The lock goes with the connection.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	return nil
}

// MigrateSQLite applies River's migrations to the SQLite database of db,
// which should be the store's writer (sqlitestore.Store.DB).
func MigrateSQLite(ctx context.Context, db *sql.DB, logger *slog.Logger) error {
	if db == nil {
		return errors.New("migrate river: no database")
	}
	m, err := rivermigrate.New(riversqlite.New(db), &rivermigrate.Config{Logger: quiet(logger)})
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	return nil
}

// RiverStatusPostgres lists River's migrations and whether the database of
// pool has each. It writes nothing.
func RiverStatusPostgres(ctx context.Context, pool *pgxpool.Pool) ([]migrations.MigrationStatus, error) {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quiet(nil)})
	if err != nil {
		return nil, fmt.Errorf("river migration status: %w", err)
	}
	return riverStatus(ctx, m)
}

// RiverStatusSQLite lists River's migrations and whether the SQLite
// database of db has each. It writes nothing.
func RiverStatusSQLite(ctx context.Context, db *sql.DB) ([]migrations.MigrationStatus, error) {
	m, err := rivermigrate.New(riversqlite.New(db), &rivermigrate.Config{Logger: quiet(nil)})
	if err != nil {
		return nil, fmt.Errorf("river migration status: %w", err)
	}
	return riverStatus(ctx, m)
}

func riverStatus[TTx any](ctx context.Context, m *rivermigrate.Migrator[TTx]) ([]migrations.MigrationStatus, error) {
	existing, err := m.ExistingVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("river migration status: %w", err)
	}
	applied := make(map[int]bool, len(existing))
	for _, e := range existing {
		applied[e.Version] = true
	}
	var out []migrations.MigrationStatus
	for _, v := range m.AllVersions() {
		out = append(out, migrations.MigrationStatus{Version: int64(v.Version),
			Name: fmt.Sprintf("river/%03d_%s", v.Version, strings.ReplaceAll(v.Name, " ", "_")), Applied: applied[v.Version]})
	}
	return out, nil
}

// quiet returns logger, or one that discards when it is nil.
func quiet(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return logger
}
