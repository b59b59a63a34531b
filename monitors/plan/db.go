package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// DB runs single statements: a store's connections, or a transaction.
// Arguments and scan destinations are plain Go values (time.Time in UTC,
// *time.Time, []string, []byte of JSON); each store converts them to and
// from its database's types, and translates its errors (no row is
// monitors.ErrNotFound, a unique violation monitors.ErrConflict).
type DB interface {
	Query(ctx context.Context, q string, args ...any) (Rows, error)
	Exec(ctx context.Context, q string, args ...any) (int64, error)
}

// Rows are the rows of a query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is one row to scan.
type Row interface{ Scan(dest ...any) error }

// All runs q on db and scans every row.
func All[T any](ctx context.Context, db DB, scan func(Row) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// One runs q on db and scans its one row; none is monitors.ErrNotFound.
func One[T any](ctx context.Context, db DB, scan func(Row) (T, error), q string, args ...any) (T, error) {
	var zero T
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return zero, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return zero, err
		}
		return zero, monitors.ErrNotFound
	}
	v, err := scan(rows)
	if err != nil {
		return zero, err
	}
	return v, rows.Err()
}

// Optional is One with no row as nil.
func Optional[T any](v *T, err error) (*T, error) {
	if errors.Is(err, monitors.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// Exec1 runs q on db; a statement that changes no row is
// monitors.ErrNotFound.
func Exec1(ctx context.Context, db DB, q string, args ...any) error {
	n, err := db.Exec(ctx, q, args...)
	if err == nil && n == 0 {
		err = monitors.ErrNotFound
	}
	return err
}

// wrap returns v, or the zero value and err wrapped with what the caller
// was doing.
func wrap[T any](v T, err error) func(format string, args ...any) (T, error) {
	return func(format string, args ...any) (T, error) {
		if err != nil {
			var zero T
			return zero, fmt.Errorf(format+": %w", append(args, err)...)
		}
		return v, nil
	}
}

// scalar scans one column.
func scalar[T any](r Row) (v T, err error) { return v, r.Scan(&v) }
