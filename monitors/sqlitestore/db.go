package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"github.com/vigilhq/vigil/monitors/plan"
)

// querier is the writer, the pool of readers, or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// db runs the planning layer's statements, converting its values to
// SQLite's: instants are INTEGER microseconds, lists JSON text.
type db struct{ q querier }

func (d db) Query(ctx context.Context, q string, args ...any) (plan.Rows, error) {
	rows, err := d.q.QueryContext(ctx, q, sqlArgs(args)...)
	if err != nil {
		return nil, interpret(err)
	}
	return sqlRows{rows}, nil
}

func (d db) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	n, err := rowsAffected(d.q.ExecContext(ctx, q, sqlArgs(args)...))
	return n, interpret(err)
}

// sqlArgs converts arguments to SQLite's types.
func sqlArgs(in []any) []any {
	out := make([]any, len(in))
	for i, a := range in {
		switch v := a.(type) {
		case time.Time:
			out[i] = v.UnixMicro()
		case *time.Time:
			out[i] = microsPtr(v)
		case []string:
			out[i] = jsonList(v)
		case []byte:
			if v != nil {
				out[i] = string(v)
			}
		case *int:
			out[i] = nullInt(v)
		case *int64:
			out[i] = nullInt64(v)
		default:
			out[i] = a
		}
	}
	return out
}

type sqlRows struct{ rows *sql.Rows }

func (r sqlRows) Next() bool { return r.rows.Next() }
func (r sqlRows) Err() error { return interpret(r.rows.Err()) }
func (r sqlRows) Close()     { _ = r.rows.Close() }
func (r sqlRows) Scan(dest ...any) error {
	return interpret(r.rows.Scan(sqlDests(dest)...))
}

// sqlDests reads SQLite's types into the destinations' types.
func sqlDests(dest []any) []any {
	out := make([]any, len(dest))
	for i, d := range dest {
		switch v := d.(type) {
		case *time.Time:
			out[i] = tm{v}
		case **time.Time:
			out[i] = tmp{v}
		case *[]string:
			out[i] = (*strList)(v)
		case **int:
			out[i] = intp{v}
		case **int64:
			out[i] = int64p{v}
		default:
			out[i] = d
		}
	}
	return out
}

// Reader is the pool of read-only connections; Writer the one writer.
func (s *Store) Reader() plan.DB { return db{s.r} }
func (s *Store) Writer() plan.DB { return db{s.w} }

// collect scans every row of rows, converting values as db does.
func collect[T any](rows *sql.Rows, scan func(plan.Row) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(sqlRows{rows})
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, interpret(rows.Err())
}
