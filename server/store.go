package server

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver

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

// OpenStore opens (and migrates) the store that url names, with the queue
// of notifications (see openPostgres and openSQLite in delivery.go).
func OpenStore(ctx context.Context, url string, logger *slog.Logger) (monitors.Store, error) {
	if IsPostgresURL(url) {
		s, err := openPostgres(ctx, url, logger)
		if err != nil {
			return nil, fmt.Errorf("open postgres store: %w", err)
		}
		return s, nil
	}
	s, err := openSQLite(ctx, SQLitePath(url), logger)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", SQLitePath(url), err)
	}
	return s, nil
}

// MigrationStatus lists the migrations of the database that url names, and
// whether each has been applied, without applying any.
func MigrationStatus(ctx context.Context, url string) ([]migrations.MigrationStatus, error) {
	driver, dsn, dialect := "sqlite", SQLitePath(url), migrations.SQLite
	if IsPostgresURL(url) {
		driver, dsn, dialect = "pgx", url, migrations.Postgres
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
	return st, nil
}
