package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vigilhq/vigil/monitors/plan"
)

// conn is a pool or a transaction.
type conn interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// db runs the planning layer's statements on a pool or a transaction,
// translating errors and reading every instant back in UTC.
type db struct{ c conn }

func (d db) Query(ctx context.Context, q string, args ...any) (plan.Rows, error) {
	rows, err := d.c.Query(ctx, q, args...)
	if err != nil {
		return nil, interpret(err)
	}
	return pgRows{rows}, nil
}

func (d db) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := d.c.Exec(ctx, q, args...)
	return tag.RowsAffected(), interpret(err)
}

type pgRows struct{ pgx.Rows }

func (r pgRows) Scan(dest ...any) error {
	if err := r.Rows.Scan(dest...); err != nil {
		return interpret(err)
	}
	for _, d := range dest {
		switch t := d.(type) {
		case *time.Time:
			*t = t.UTC()
		case **time.Time:
			// pgx scans a non-NULL time into a new one of its own
			// (pointerPointerScanPlan): it is ours to change.
			if *t != nil {
				**t = (*t).UTC()
			}
		}
	}
	return nil
}

func (r pgRows) Err() error { return interpret(r.Rows.Err()) }

// Reader and Writer are the pool.
func (s *Store) Reader() plan.DB { return db{s.pool} }
func (s *Store) Writer() plan.DB { return db{s.pool} }
