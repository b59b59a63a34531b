package pgstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vigilhq/vigil/monitors"
)

// interpret translates database errors at the boundary: no rows is
// monitors.ErrNotFound, a unique violation monitors.ErrConflict, and a
// foreign key violation (a row that refers to a missing one)
// monitors.ErrNotFound.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return monitors.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%w (%s)", monitors.ErrConflict, pgErr.ConstraintName)
		case "23503": // foreign_key_violation
			return fmt.Errorf("%w (%s)", monitors.ErrNotFound, pgErr.ConstraintName)
		}
	}
	return err
}

// Times are timestamptz, written in UTC and read back in UTC.

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
