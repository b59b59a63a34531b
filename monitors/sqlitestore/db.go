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
// Statements run through the pool's cache of prepared statements (stmts,
// nil for none). In a transaction (tx set), a statement the writer's cache
// holds runs prepared on the transaction; one it does not hold runs as it
// is, and is prepared once the transaction has ended (stmtCache.later).
type db struct {
	q     querier
	stmts *stmtCache
	tx    *sql.Tx
}

// prepared returns q as a prepared statement to run, or nil to run q as
// it is.
func (d db) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	if d.tx == nil {
		return d.stmts.get(ctx, q)
	}
	st := d.stmts.peek(q)
	if st == nil {
		return nil, nil
	}
	return d.tx.StmtContext(ctx, st), nil
}

func (d db) Query(ctx context.Context, q string, args ...any) (plan.Rows, error) {
	st, err := d.prepared(ctx, q)
	if err != nil {
		return nil, interpret(err)
	}
	var rows *sql.Rows
	if st != nil {
		rows, err = st.QueryContext(ctx, sqlArgs(args)...)
	} else {
		rows, err = d.q.QueryContext(ctx, q, sqlArgs(args)...)
	}
	if err != nil {
		return nil, interpret(err)
	}
	return sqlRows{rows}, nil
}

func (d db) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	st, err := d.prepared(ctx, q)
	if err != nil {
		return 0, interpret(err)
	}
	var res sql.Result
	if st != nil {
		res, err = st.ExecContext(ctx, sqlArgs(args)...)
	} else {
		res, err = d.q.ExecContext(ctx, q, sqlArgs(args)...)
	}
	n, err := rowsAffected(res, err)
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

// sqlDests reads SQLite's types into the destinations' types. It
// replaces the destinations in dest itself (a row of a monitor has 34):
// what it puts there it passes on as it is, so a dest scanned again reads
// the same.
func sqlDests(dest []any) []any {
	out := dest
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
func (s *Store) Reader() plan.DB { return db{q: s.r, stmts: s.rStmts} }
func (s *Store) Writer() plan.DB { return db{q: s.w, stmts: s.wStmts} }

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
