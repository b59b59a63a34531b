// Package migrations holds Vigil's database schema, one folder of SQL files
// per dialect, embedded in the binary, and applies it with goose.
//
// Both dialects have the same files under the same names (a test checks
// it), so a migration is always written twice, once for each database.
// Files are named NNNN_name.sql, with goose's "-- +goose Up" and
// "-- +goose Down" sections.
//
// On PostgreSQL, [Up] holds an advisory lock while it migrates, so several
// replicas starting at once migrate one after the other. The lock is per
// database and schema: stores in different schemas of one database (as in
// tests) do not wait for each other.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"time"

	"github.com/pressly/goose/v3"
)

// Dialect names a database the schema is written for.
type Dialect string

// Dialects.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// FS returns the migration files of dialect, at the root of the returned
// file system.
func FS(dialect Dialect) (fs.FS, error) {
	switch dialect {
	case Postgres, SQLite:
		return fs.Sub(files, string(dialect))
	}
	return nil, fmt.Errorf("migrations: unknown dialect %q (want postgres or sqlite)", dialect)
}

// Names returns the file names of dialect's migrations, in order.
func Names(dialect Dialect) ([]string, error) {
	fsys, err := FS(dialect)
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	return names, nil
}

// MigrationStatus is one migration and whether it has been applied.
type MigrationStatus struct {
	Version   int64
	Name      string // the file name, such as 0001_init.sql
	Applied   bool
	AppliedAt time.Time // zero when not applied
}

// Up applies every pending migration of dialect to db.
func Up(ctx context.Context, db *sql.DB, dialect Dialect) error {
	p, err := provider(ctx, db, dialect)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply %s migrations: %w", dialect, err)
	}
	return nil
}

// Undo applies the Down section of one applied migration of dialect,
// leaving those after it in place: a benchmark compares the schema with
// and without it.
func Undo(ctx context.Context, db *sql.DB, dialect Dialect, version int64) error {
	p, err := provider(ctx, db, dialect)
	if err != nil {
		return err
	}
	if _, err := p.ApplyVersion(ctx, version, false); err != nil {
		return fmt.Errorf("undo %s migration %d: %w", dialect, version, err)
	}
	return nil
}

// Status reports every migration of dialect and whether db has it. It
// writes nothing: on a database that was never migrated every migration
// is pending. On PostgreSQL it waits for a migration in progress (the
// advisory lock of [Up]) to end, so that what it reports is settled.
func Status(ctx context.Context, db *sql.DB, dialect Dialect) ([]MigrationStatus, error) {
	p, err := provider(ctx, db, dialect)
	if err != nil {
		return nil, err
	}
	exists, err := versionTableExists(ctx, db, dialect)
	if err != nil {
		return nil, err
	}
	if !exists {
		// goose's Status would create its version table.
		var out []MigrationStatus
		for _, src := range p.ListSources() {
			out = append(out, MigrationStatus{Version: src.Version, Name: path.Base(src.Path)})
		}
		return out, nil
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s migration status: %w", dialect, err)
	}
	out := make([]MigrationStatus, 0, len(st))
	for _, s := range st {
		ms := MigrationStatus{Version: s.Source.Version, Name: path.Base(s.Source.Path), Applied: s.State == goose.StateApplied}
		if ms.Applied {
			ms.AppliedAt = s.AppliedAt.UTC()
		}
		out = append(out, ms)
	}
	return out, nil
}

// versionTableExists reports whether goose's table of applied versions is
// in the schema db works in.
func versionTableExists(ctx context.Context, db *sql.DB, dialect Dialect) (bool, error) {
	q := `SELECT to_regclass('goose_db_version') IS NOT NULL`
	if dialect == SQLite {
		q = `SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'`
	}
	var ok bool
	if err := db.QueryRowContext(ctx, q).Scan(&ok); err != nil {
		return false, fmt.Errorf("look for the migration versions table: %w", err)
	}
	return ok, nil
}

func provider(ctx context.Context, db *sql.DB, dialect Dialect) (*goose.Provider, error) {
	fsys, err := FS(dialect)
	if err != nil {
		return nil, err
	}
	var (
		gd   goose.Dialect
		opts = []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	)
	switch dialect {
	case Postgres:
		gd = goose.DialectPostgres
		id, err := LockID(ctx, db)
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(&advisoryLocker{id: id}))
	case SQLite:
		// No lock: SQLite has one writer, and goose applies each
		// migration in a transaction of its own.
		gd = goose.DialectSQLite3
	}
	p, err := goose.NewProvider(gd, db, fsys, opts...)
	if err != nil {
		return nil, fmt.Errorf("prepare %s migrations: %w", dialect, err)
	}
	return p, nil
}

// LockID returns the key of the PostgreSQL advisory lock that [Up] holds
// while it migrates the current schema of db. It is derived from the
// database and the schema, so that only migrations of one schema exclude
// each other.
func LockID(ctx context.Context, db *sql.DB) (int64, error) {
	var dbName string
	var schema sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT current_database(), current_schema()").Scan(&dbName, &schema); err != nil {
		return 0, fmt.Errorf("read current schema: %w", err)
	}
	if !schema.Valid {
		return 0, errors.New("migrations: no current schema: the search_path names no schema that exists")
	}
	h := fnv.New64a()
	h.Write([]byte("vigil-migrations\x00" + dbName + "\x00" + schema.String))
	return int64(h.Sum64()), nil
}

// advisoryLocker holds a PostgreSQL session advisory lock while goose
// migrates. Unlike goose's own locker, which polls, it waits in
// pg_advisory_lock, so a second replica starts as soon as the first is done.
type advisoryLocker struct{ id int64 }

func (l *advisoryLocker) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", l.id); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	return nil
}

func (l *advisoryLocker) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	var ok bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", l.id).Scan(&ok); err != nil {
		return fmt.Errorf("release migration lock: %w", err)
	}
	if !ok {
		return errors.New("migrations: migration lock was not held")
	}
	return nil
}
