package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lazyTx is a transaction of the pool that begins with its first
// statement instead of in a round trip of its own: a first SendBatch
// sends the BEGIN first in its pipeline (pgx's Batch.BeginTx), and any
// other first statement begins the transaction just before it. Once begun
// it is pgx's transaction (savepoints, Commit and Rollback giving the
// connection back to the pool); one that sent nothing commits and rolls
// back without a word to the server.
type lazyTx struct {
	pool   *pgxpool.Pool
	tx     pgx.Tx // nil until begun
	closed bool   // ended before it began
}

var _ pgx.Tx = (*lazyTx)(nil)

// begin begins the transaction now, unless it has begun.
func (t *lazyTx) begin(ctx context.Context) (pgx.Tx, error) {
	if t.tx != nil {
		return t.tx, nil
	}
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	tx, err := t.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	t.tx = tx
	return tx, nil
}

// SendBatch sends b, with the BEGIN first in its pipeline when the
// transaction has not begun. The results are b's: the BEGIN's is read
// before them.
func (t *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.tx != nil {
		return t.tx.SendBatch(ctx, b)
	}
	if t.closed {
		return pgx.FailedBatchResults(b, pgx.ErrTxClosed)
	}
	begun := &pgx.Batch{}
	begun.BeginTx(pgx.TxOptions{})
	begun.QueuedQueries = append(begun.QueuedQueries, b.QueuedQueries...)
	br := t.pool.SendBatch(ctx, begun)
	t.tx = br.Tx()
	return &begunResults{BatchResults: br}
}

func (t *lazyTx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Begin(ctx)
}

// Commit commits the transaction, if it has begun.
func (t *lazyTx) Commit(ctx context.Context) error {
	if t.tx == nil {
		if t.closed {
			return pgx.ErrTxClosed
		}
		t.closed = true
		return nil
	}
	return t.tx.Commit(ctx)
}

// Rollback rolls the transaction back, if it has begun.
func (t *lazyTx) Rollback(ctx context.Context) error {
	if t.tx == nil {
		if t.closed {
			return pgx.ErrTxClosed
		}
		t.closed = true
		return nil
	}
	return t.tx.Rollback(ctx)
}

func (t *lazyTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return 0, err
	}
	return tx.CopyFrom(ctx, table, columns, src)
}

// LargeObjects are the transaction's, once begun; the store uses none
// (the zero value, when it cannot begin, fails their first operation).
func (t *lazyTx) LargeObjects() pgx.LargeObjects {
	tx, err := t.begin(context.Background())
	if err != nil {
		return pgx.LargeObjects{}
	}
	return tx.LargeObjects()
}

func (t *lazyTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Prepare(ctx, name, sql)
}

func (t *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return tx.Exec(ctx, sql, args...)
}

func (t *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Query(ctx, sql, args...)
}

func (t *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	tx, err := t.begin(ctx)
	if err != nil {
		return errRow{err}
	}
	return tx.QueryRow(ctx, sql, args...)
}

// Conn returns the transaction's connection, beginning the transaction
// so that there is one; nil if it could not begin.
func (t *lazyTx) Conn() *pgx.Conn {
	tx, err := t.begin(context.Background())
	if err != nil {
		return nil
	}
	return tx.Conn()
}

// begunResults are the results of a batch that lazyTx.SendBatch sent with
// the BEGIN first: that first result is read before any other.
type begunResults struct {
	pgx.BatchResults
	read bool
	err  error
}

func (r *begunResults) skipBegin() error {
	if !r.read {
		r.read = true
		_, r.err = r.BatchResults.Exec()
	}
	return r.err
}

func (r *begunResults) Exec() (pgconn.CommandTag, error) {
	if err := r.skipBegin(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return r.BatchResults.Exec()
}

func (r *begunResults) Query() (pgx.Rows, error) {
	if err := r.skipBegin(); err != nil {
		return nil, err
	}
	return r.BatchResults.Query()
}

func (r *begunResults) QueryRow() pgx.Row {
	if err := r.skipBegin(); err != nil {
		return errRow{err}
	}
	return r.BatchResults.QueryRow()
}

// errRow is a row that could not be read.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
